package rotate

import (
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/krmio"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/report"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Needs says which items of a list the function reads under the policy
// fnConfig (package krmio parses only those; the others pass through as
// text):
//
//   - by kind (NeedsKind): core, apps, batch and policy objects, Argo
//     Rollouts, Prometheus rules, Cluster API, EKS Anywhere and machine
//     templates; not an unrelated custom resource;
//   - of core Secrets and ConfigMaps, only those the steps read: the trust
//     bundles' sources and targets, by name; those holding a value the
//     certificate report scans (PEM, a kubeconfig's certificates) or one
//     that does not decode (a problem the report names); and any whose
//     metadata the processor must refuse.
//
// A step that comes to read other Secrets or ConfigMaps must say so here.
func Needs(fnConfig *yaml.RNode) krmio.Reads {
	reads := krmio.Reads{Kind: NeedsKind}
	pol, err := policy.Decode(fnConfig)
	if err != nil {
		return reads // the run fails on the policy; every item is read
	}
	names := map[string]bool{}
	for _, b := range pol.Spec.TrustBundles {
		names[b.Target.Name] = true
		for _, s := range b.Sources {
			for _, ref := range []*policy.ObjectKeyRef{s.Secret, s.ConfigMap} {
				if ref != nil {
					names[ref.Name] = true
				}
			}
		}
	}
	reads.Item = func(item *yaml.RNode) bool { return readsItem(item, names) }
	return reads
}

func readsItem(item *yaml.RNode, names map[string]bool) bool {
	if kind := item.GetKind(); kind != "Secret" && kind != "ConfigMap" || kube.GroupOf(item.GetApiVersion()) != "" {
		return true
	}
	if kube.CheckShape(item, "") != nil || names[item.GetName()] {
		return true
	}
	values, err := kube.Values(item)
	if err != nil {
		return true
	}
	for _, v := range values {
		if report.Reads(v.Bytes) {
			return true
		}
	}
	return false
}

// NeedsKind reports whether the function may read resources of this
// apiVersion and kind: the core, apps, batch and policy groups, Argo
// Rollouts, Prometheus rules, Cluster API and EKS Anywhere, and machine
// templates of any group. Anything else (an unrelated custom resource) is
// passed through without being parsed.
func NeedsKind(apiVersion, kind string) bool {
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		return true // core group ("v1")
	}
	switch group {
	case "apps", "batch", "policy", "argoproj.io", "monitoring.coreos.com", "rotate-certs.dev":
		return true
	}
	// Cluster API and EKS Anywhere objects, and any machine template: an
	// EtcdadmCluster's infrastructure template may live in a provider's own
	// API group.
	return strings.HasSuffix(group, "cluster.x-k8s.io") || strings.HasSuffix(group, "eks.amazonaws.com") ||
		strings.HasSuffix(kind, "Template")
}
