#!/usr/bin/env bash
# refresh.sh [NAMESPACE/SECRET...]
#
# The CI step for CA Secrets that live only in the cluster: snapshot each
# one into snapshot_<namespace>_<name>.yaml (kubectl get | rotate-certs
# snapshot: certificates only, local config), render the package, and
# commit when something
# changed. Run it from this directory, inside a git work tree, with a
# kubeconfig that may read the Secrets. It never pushes.
#
#   KUBECTL, ROTATE_CERTS   the binaries (default: kubectl, rotate-certs on PATH)
#
# Exit codes: 0 committed or nothing to do; 1 kubectl, the snapshot or the
# render failed (nothing written past that point, nothing committed); 2 the
# package had uncommitted changes before the run.
set -euo pipefail

kubectl=${KUBECTL:-kubectl}
rotate_certs=${ROTATE_CERTS:-rotate-certs}
if [ "$#" -eq 0 ]; then
	set -- envoy-gateway-system/envoy-gateway
fi

if [ -n "$(git status --porcelain -- .)" ]; then
	echo "refresh: the package has uncommitted changes; commit or stash them first" >&2
	git status --short -- . >&2
	exit 2
fi

for source in "$@"; do
	ns=${source%%/*}
	name=${source#*/}
	# -o replaces the snapshot only when it succeeds; pipefail stops here
	# when kubectl fails.
	"$kubectl" get secret "$name" -n "$ns" -o yaml |
		"$rotate_certs" snapshot -o "snapshot_${ns}_${name}.yaml"
done

"$rotate_certs" render . --policy rotation-policy.yaml

if [ -z "$(git status --porcelain -- .)" ]; then
	echo "refresh: nothing changed in the cluster's CAs; nothing to commit" >&2
	exit 0
fi
git add --all -- .
git commit --quiet -m "rotate-certs: snapshot in-cluster CAs and render" -- .
echo "refresh: committed $(git rev-parse --short HEAD)" >&2
