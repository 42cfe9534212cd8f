#!/usr/bin/env bash
# argocd.sh VERSION DIR: build argocd-harness (hack/argocd/harness.go) inside a checkout of
# Argo CD VERSION (e.g. v3.2.12) into DIR/bin, once per machine.
#
# Argo CD's go.mod has replace directives, so nothing of it can be `go install`ed at a
# version: this script takes the release's source from the Go module proxy (`go mod
# download`), copies it to DIR/src, adds the harness there and builds it with the
# release's own go.mod and go.sum. The harness is Argo CD's argocd-cmp-server command and
# the repo-server's manifest generation - what rendering an Application through a config
# management plugin runs - without the rest of the multi-call binary (server, controllers,
# CLI, web UI). Nothing is rebuilt when DIR/bin/VERSION names the same release and harness.
set -euo pipefail

version=${1:?usage: argocd.sh VERSION DIR}
dest=${2:?usage: argocd.sh VERSION DIR}
go=${GO:-go}
here=$(cd "$(dirname "$0")" && pwd)
harness="$here/argocd/harness.go"
export GOTOOLCHAIN=local CGO_ENABLED=0
module=github.com/argoproj/argo-cd/v3
stamp="argo-cd $version harness $(sha256sum "$harness" | cut -c1-16)"

if grep -qxF "$stamp" "$dest/bin/VERSION" 2>/dev/null && [ -x "$dest/bin/argocd-harness" ]; then
  echo "argocd-harness $version: cached in $dest/bin"
  exit 0
fi

start=$(date +%s)
echo "argocd-harness $version: building into $dest/bin (about 5 CPU-minutes, once per machine)"
info=$("$go" mod download -json "$module@$version")
srcdir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$info")
[ -d "$srcdir" ] || { echo "argocd.sh: no source for $module@$version:" >&2; echo "$info" >&2; exit 1; }
# A replace by a directory names a nested module, which the module proxy's copy of the
# release leaves out (Argo CD 3.3 and later keep gitops-engine so): it cannot build here.
if grep -Eq '=>[[:space:]]*\./' "$srcdir/go.mod"; then
  echo "argocd.sh: $module@$version replaces a module by a directory of its repository," >&2
  echo "which the module proxy does not serve; pin a release that requires only published modules" >&2
  exit 1
fi

src="$dest/src"
rm -rf "$src" "$dest/bin.new"
mkdir -p "$dest/bin.new"
cp -r "$srcdir" "$src"
chmod -R u+w "$src"
mkdir -p "$src/hack/rotate-certs-harness"
sed '/^\/\/go:build ignore$/d' "$harness" > "$src/hack/rotate-certs-harness/main.go"
cd "$src"
"$go" build -trimpath -ldflags "-s -w -X $module/common.version=${version#v} -X $module/common.gitTag=$version" \
  -o "$dest/bin.new/argocd-harness" ./hack/rotate-certs-harness
"$dest/bin.new/argocd-harness" argocd-cmp-server --help >/dev/null
echo "$stamp" > "$dest/bin.new/VERSION"
rm -rf "$dest/bin"
mv "$dest/bin.new" "$dest/bin"
# The checkout is only needed to build; the Go build cache keeps what a rebuild reuses.
rm -rf "$src"
echo "argocd-harness $version: built in $(( $(date +%s) - start ))s"
