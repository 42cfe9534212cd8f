#!/usr/bin/env bash
# make demo: rotate the Envoy Gateway CA on a copy of examples/envoy-gateway
# and show what rotate-certs did. Needs bin/rotate-certs and bin/kustomize
# (make build tools).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/examples"
cp "$bin/rotate-certs" "$work/bin/"
cp -r "$root/examples/envoy-gateway" "$work/examples/"
pkg="$work/examples/envoy-gateway"

subjects() { # print the subjects of the PEM certificates on stdin
	awk '/BEGIN CERT/{n++} {print > (dir "/cert" n ".pem")}' dir="$work" -
	for f in "$work"/cert*.pem; do openssl x509 -noout -subject -enddate -in "$f" 2>/dev/null |
		paste -sd' ' | sed 's/^subject=/    /'; rm -f "$f"; done
}
trust_of() { # file -> subjects of its ca.crt
	sed -n 's/^  ca.crt: //p' "$1" | base64 -d | subjects
}

if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
say() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }

git_commit() { (cd "$pkg" && git add -A && git -c user.email=demo@example.com -c user.name=demo commit -qm "$1"); }
value() { sed -n "s/^  $2: //p" "$pkg/$1"; } # file key -> the base64 value of a data key

# The history in git: the package as it was before certgen ran (its Secret
# held the OLD CA and a leaf of it, as ratelimit-client still does), then
# certgen's in-place replacement, committed as it is, without a render.
cp "$pkg/gateway-ca.yaml" "$work/gateway-ca.certgen.yaml"
sed -i -e "s|^  ca.crt: .*|  ca.crt: $(value trust.yaml ca.crt)|" \
	-e "s|^  tls.crt: .*|  tls.crt: $(value ratelimit-client.yaml tls.crt)|" \
	-e "s|^  tls.key: .*|  tls.key: $(value ratelimit-client.yaml tls.key)|" "$pkg/gateway-ca.yaml"
(cd "$pkg" && git init -q .)
git_commit "before certgen"
cp "$work/gateway-ca.certgen.yaml" "$pkg/gateway-ca.yaml"
git_commit "certgen replaced the CA in place"

say "The situation: certgen replaced the Envoy Gateway CA in place"
echo "  envoy-gateway (source) now holds:"; trust_of "$pkg/gateway-ca.yaml"
echo "  envoy-gateway-trust (what peers trust, as committed in git) holds:"; trust_of "$pkg/trust.yaml"
echo "  ratelimit-client still presents a leaf of the OLD CA: peers that trust only the new CA would reject it."

say "kustomize build --enable-alpha-plugins --enable-exec examples/envoy-gateway"
(cd "$pkg" && "$bin/kustomize" build --enable-alpha-plugins --enable-exec . > "$work/out.yaml")
awk -v RS='\n---\n' '/name: envoy-gateway-trust/' "$work/out.yaml" | sed -n 's/^  ca.crt: //p' | base64 -d > "$work/bundle.pem"
echo "  the rendered envoy-gateway-trust now holds the new CA AND the previous one:"
subjects < "$work/bundle.pem"
grep -E 'rotate-certs.dev/(bundle-hash|rotated-at)' "$work/out.yaml" | sed 's/^ */  /'

say "rotate-certs diff HEAD~1 HEAD: the pull request of certgen's change, as the gate sees it"
status=0
(cd "$pkg" && "$work/bin/rotate-certs" diff HEAD~1 HEAD 2>&1) >"$work/diff.txt" || status=$?
sed 's/^/  /' "$work/diff.txt"
if [ "$status" -ne 1 ]; then echo "  diff exited $status, want 1: unexpected"; exit 1; fi
echo "  exit 1: the gate fails the pull request - peers that read the trust once would reject the new leaf"

say "rotate-certs render (what a CI job commits back to git)"
"$work/bin/rotate-certs" render "$pkg" --policy "$pkg/rotation-policy.yaml" 2>/dev/null
(cd "$pkg" && git --no-pager diff --stat && git --no-pager diff -U0 | grep -E '^[+-] ' | cut -c1-100)

say "Commit, render again: nothing changes (no diff, no restart, no sync)"
git_commit "render"
(cd "$pkg" && "$work/bin/rotate-certs" render . --policy rotation-policy.yaml 2>/dev/null && \
	if git diff --quiet; then echo "  second render: no changes"; else echo "  second render CHANGED files"; exit 1; fi)

say "Both leaves verify against the rendered bundle (openssl verify)"
for leaf in example-leaf-old:ratelimit-client.yaml example-leaf-new:gateway-ca.yaml; do
	name=${leaf%%:*} file=${leaf#*:}
	sed -n 's/^  tls.crt: //p' "$pkg/$file" | base64 -d > "$work/$name.pem"
	printf '  %s: ' "$name"; openssl verify -CAfile "$work/bundle.pem" "$work/$name.pem" | sed 's/.*: //'
done

say "Restarts: the rate-limit server rolls, the hot Envoy does not"
hash=$(sed -n 's/^ *rotate-certs.dev\/trust-hash: //p' "$pkg/ratelimit.yaml" | tr -d "'")
echo "  envoy-ratelimit (reads the CA through a subPath mount): trust-hash ${hash:0:23}... -> rolled by its own rolling update"
if grep -q 'rotate-certs.dev/trust-hash' "$pkg/envoy.yaml"; then echo "  envoy-default-eg was rolled: unexpected"; exit 1; fi
echo "  envoy-default-eg (whole-volume mount, rotate-certs.dev/reload: hot): untouched, it reloads its files itself"

say "rotate-certs diff HEAD~2 HEAD: certgen's change with its render, as the gate sees it"
(cd "$pkg" && "$work/bin/rotate-certs" diff HEAD~2 HEAD 2>&1) >"$work/diff.txt" || { sed 's/^/  /' "$work/diff.txt"; echo "  diff failed: unexpected"; exit 1; }
sed 's/^/  /' "$work/diff.txt"
echo "  exit 0: the new CA is trusted beside the old one, the rate-limit server rolls, nothing breaks"
