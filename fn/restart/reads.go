package restart

import (
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kindPDB is a PodDisruptionBudget, whose selector says which rolls it
// holds back (pdbsIn).
const kindPDB = "PodDisruptionBudget"

// groupPDB is the API group of PodDisruptionBudgets.
const groupPDB = "policy"

// Reads declares what the restart rules read of the input, under bundles
// (a policy's spec.trustBundles): every workload they roll or report (the
// rolled and reported kinds of policy.WorkloadKinds, in the API groups of
// the versions they read; CountWorkloads, whose count PreviousHeldUntil
// takes, counts the rolled ones among them), every
// PodDisruptionBudget, and Namespaces when a bundle's restarts find
// injected consumers by their Namespace (restart.mesh, restart.injected)
// or it writes a trust-manager Bundle, whose namespaceSelector says where
// its readers are (Readers.selects). The targets whose readers they
// look for are handed to them by the trust bundles (Bundle.Targets).
func Reads(bundles []policy.TrustBundle) kube.Reads {
	return readsWith(bundles, policy.WorkloadKinds())
}

// readsWith is Reads by the workload-kind table kinds: tests add a kind
// with it.
func readsWith(bundles []policy.TrustBundle, kinds policy.WorkloadTable) kube.Reads {
	namespaces := false
	for _, b := range bundles {
		namespaces = namespaces || b.Restart.InjectsTrust() || b.Target.Kind == kube.TargetBundle
	}
	r := kube.Reads{
		Kinds: []kube.GroupKind{{Group: groupPDB, Kind: kindPDB}},
		Some: []kube.ItemRule{
			{GroupKind: kube.GroupKind{Kind: "Namespace"}, Selects: func(*yaml.RNode) bool { return namespaces }},
		},
	}
	seen := map[kube.GroupKind]bool{}
	for _, k := range kinds.Rows() {
		if k.Role == policy.RoleListed {
			continue
		}
		for _, v := range k.APIVersions {
			gk := kube.GroupKind{Group: kube.GroupOf(v), Kind: k.Kind}
			if !seen[gk] {
				seen[gk] = true
				r.Kinds = append(r.Kinds, gk)
			}
		}
	}
	return r
}
