package trustbundle

import (
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Reads declares what rendering bundles reads of the input, under bundles
// (a policy's spec.trustBundles):
//
//   - every object a target can be besides a Secret or ConfigMap: the
//     kinds whose caBundle fields it injects (kube.InjectKinds, with the
//     cainjector annotations on them), and every object of a
//     cluster-scoped kind of the target-kind table (kube.TargetKinds):
//     ClusterTrustBundles and trust-manager Bundles (a Secret or ConfigMap
//     target must not be one that a Bundle of the input writes:
//     bundleclash.go);
//   - every object of a kind of restart.CARefReaderKinds (Gateway API
//     BackendTLSPolicies and Gateways, Envoy Gateway
//     ClientTrafficPolicies), whose CA references read only key ca.crt
//     of a Secret or ConfigMap target (gateway.go);
//   - of the namespaced target kinds (core Secrets and ConfigMaps), manifests and local-config snapshots
//     alike: the sources and targets, by name; every one in the trust
//     namespace of a trust-manager Bundle target, whose sources the Bundle
//     names in its own spec, by name or label; and those a missing
//     source's error could name as the nearest (kube.Near, nearest);
//   - Namespaces when a bundle picks its target's namespaces by label
//     (namespaceSelector), or writes a Secret or ConfigMap, whose
//     namespace's labels a trust-manager Bundle's namespaceSelector may
//     select (namespaceLabels). A bundle that only injects reads none;
//     its Namespaces stay in the plan, which they were in before each
//     package declared its reads, so that the plan never narrowed.
//
// The certificates that chain to a bundle's CAs come from the run's
// certificate inventory, which reads what package inventory declares.
func Reads(bundles []policy.TrustBundle) kube.Reads { return readsWith(bundles, kube.TargetKinds()) }

// readsWith is Reads by the target-kind table targets: tests add a kind
// with it.
func readsWith(bundles []policy.TrustBundle, targets kube.TargetTable) kube.Reads {
	names := map[string]bool{}
	trust := map[string]bool{} // the trust namespaces of trust-manager Bundle targets
	var sources []string       // the sources' names, for kube.Near
	namespaces := false
	for _, b := range bundles {
		t := b.Target
		d, known := targets.Lookup(t.Kind)
		names[t.Name] = true
		if d.Applies("trustNamespace") {
			trust[t.TrustNamespace] = true
		}
		namespaces = namespaces || t.NamespaceSelector != nil || !known || d.Namespaced
		for _, s := range b.Sources {
			for _, ref := range []*policy.ObjectKeyRef{s.Secret, s.ConfigMap} {
				if ref != nil {
					names[ref.Name] = true
					sources = append(sources, ref.Name)
				}
			}
		}
	}
	object := func(item *yaml.RNode) bool {
		name := item.GetName()
		if names[name] || trust[item.GetNamespace()] {
			return true
		}
		for _, src := range sources {
			if kube.Near(src, name) {
				return true // a missing source's error names it as the nearest
			}
		}
		return false
	}
	// Every object of a cluster-scoped target kind; of a namespaced one
	// (core Secrets and ConfigMaps), those object picks.
	var r kube.Reads
	for _, d := range targets.Rows() {
		if d.Namespaced {
			r.Some = append(r.Some, kube.ItemRule{GroupKind: d.GroupKind(), Selects: object})
		} else {
			r.Kinds = append(r.Kinds, d.GroupKind())
		}
	}
	r.Some = append(r.Some, kube.ItemRule{GroupKind: kube.GroupKind{Kind: "Namespace"}, Selects: func(*yaml.RNode) bool { return namespaces }})
	r.Kinds = append(r.Kinds, restart.CARefReaderKinds()...)
	for _, row := range kube.InjectKinds().Rows() {
		r.Kinds = append(r.Kinds, row.GroupKind())
	}
	return r
}
