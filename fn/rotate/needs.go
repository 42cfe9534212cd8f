package rotate

import (
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/report"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Needs says which items of a list the function reads under the policy
// fnConfig (package resio parses only those; the others pass through as
// text):
//
//   - by kind (NeedsKind): core, apps, batch and policy objects, Argo
//     Rollouts, Prometheus rules, webhook configurations, APIServices,
//     CustomResourceDefinitions, ClusterTrustBundles, trust-manager
//     Bundles, cert-manager Certificates, Cluster API, EKS Anywhere and machine templates; not an
//     unrelated custom resource;
//   - of core Secrets and ConfigMaps, only those the steps read: the trust
//     bundles' sources and targets, by name, every one of the trust
//     namespace of a trust-manager Bundle target (the Bundle names its
//     sources, by name or label, in its own spec), and those a missing source's
//     error could name as the nearest (kube.Near); those holding a value the
//     certificate report scans (PEM, a kubeconfig's certificates) or one
//     that does not decode (a problem the report names); and any whose
//     metadata or duplicate keys the processor must refuse;
//   - Namespaces only when a bundle picks its target's namespaces by
//     label (namespaceSelector), finds injected consumers by their
//     Namespace (restart.mesh, restart.injected), writes a trust-manager
//     Bundle, whose target namespaceSelector says where its readers are,
//     or writes a Secret or ConfigMap, which must not be one that a
//     trust-manager Bundle of the input writes in the namespaces its
//     selector picks.
//
// A step that comes to read other Secrets or ConfigMaps must say so here.
func Needs(fnConfig *yaml.RNode) resio.Reads {
	reads := resio.Reads{Kind: NeedsKind}
	pol, err := policy.Decode(fnConfig)
	if err != nil {
		return reads // the run fails on the policy; every item is read
	}
	names := map[string]bool{}
	trust := map[string]bool{} // the trust namespaces of trust-manager Bundle targets
	var sources []string       // the sources' names, for kube.Near
	selects := false           // a bundle picks namespaces by their labels
	for _, b := range pol.Spec.TrustBundles {
		names[b.Target.Name] = true
		if b.Target.Kind == policy.TargetBundle {
			trust[b.Target.TrustNamespace] = true
		}
		// A Secret or ConfigMap target is checked against the
		// trust-manager Bundles of the input, whose namespaceSelector
		// reads Namespace labels.
		selects = selects || b.Target.NamespaceSelector != nil || b.Restart.InjectsTrust() || b.Target.Kind != policy.TargetClusterTrustBundle
		for _, s := range b.Sources {
			for _, ref := range []*policy.ObjectKeyRef{s.Secret, s.ConfigMap} {
				if ref != nil {
					names[ref.Name] = true
					sources = append(sources, ref.Name)
				}
			}
		}
	}
	reads.Item = func(item *yaml.RNode) bool { return readsItem(item, names, trust, sources, selects) }
	return reads
}

func readsItem(item *yaml.RNode, names, trust map[string]bool, sources []string, selects bool) bool {
	kind := item.GetKind()
	if kube.GroupOf(item.GetApiVersion()) != "" || kind != "Secret" && kind != "ConfigMap" && kind != "Namespace" {
		return true
	}
	if kind == "Namespace" {
		return selects || kube.CheckShape(item, "") != nil
	}
	if kube.CheckShape(item, "") != nil {
		return true
	}
	name := item.GetName()
	if names[name] || trust[item.GetNamespace()] {
		return true
	}
	if len(kube.DuplicateKeysOf(item)) > 0 {
		return true // the processor refuses it
	}
	for _, src := range sources {
		if kube.Near(src, name) {
			return true // a missing source's error names it as the nearest
		}
	}
	if kube.StartsWithPEM(item) {
		return true // the common case, told without decoding every value
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

// NeedsKind reports whether a step may read resources of this apiVersion
// and kind: Secrets, ConfigMaps and Namespaces of the core group, the
// workloads restarts roll (Deployments, StatefulSets, DaemonSets, Jobs,
// CronJobs, Argo Rollouts) and PodDisruptionBudgets, PrometheusRules, the
// objects that keep trust outside Secrets and ConfigMaps (webhook
// configurations, APIServices, CustomResourceDefinitions,
// ClusterTrustBundles, trust-manager Bundles), cert-manager Certificates
// (renewals of a source's CA), every object of Cluster
// API, EKS Anywhere and rotate-certs itself, and machine templates of any
// group. Anything else (a Service, an unrelated
// custom resource) is passed through without being parsed.
func NeedsKind(apiVersion, kind string) bool {
	if kind == "" {
		return false // no step reads an object without a kind
	}
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		group = "" // the core group ("v1"), or no apiVersion at all
	}
	if readKinds[group][kind] {
		return true
	}
	switch {
	case group == kube.GroupOf(policy.APIVersion):
		return true
	case strings.HasSuffix(group, "cluster.x-k8s.io") || strings.HasSuffix(group, "eks.amazonaws.com"):
		// Cluster API and EKS Anywhere objects, and any machine template: an
		// EtcdadmCluster's infrastructure template may live in a provider's
		// own API group.
		return true
	}
	return strings.HasSuffix(kind, "Template")
}

// readKinds are the kinds the steps read, by API group.
var readKinds = map[string]map[string]bool{
	"":                      {"Secret": true, "ConfigMap": true, "Namespace": true},
	"apps":                  {policy.KindDeployment: true, policy.KindStatefulSet: true, policy.KindDaemonSet: true},
	"batch":                 {"Job": true, "CronJob": true},
	"argoproj.io":           {policy.KindRollout: true},
	"policy":                {"PodDisruptionBudget": true},
	"monitoring.coreos.com": {"PrometheusRule": true},
	// Where Kubernetes keeps trust outside Secrets and ConfigMaps: caBundle
	// fields the function injects into and the report reads, and the
	// cluster-wide and trust-manager bundles it writes.
	policy.InjectKinds[policy.KindMutatingWebhookConfiguration]: {
		policy.KindMutatingWebhookConfiguration: true, policy.KindValidatingWebhookConfiguration: true,
	},
	policy.InjectKinds[policy.KindAPIService]:               {policy.KindAPIService: true},
	policy.InjectKinds[policy.KindCustomResourceDefinition]: {policy.KindCustomResourceDefinition: true},
	"certificates.k8s.io":                                   {policy.TargetClusterTrustBundle: true},
	trustbundle.TrustManagerGroup:                           {"Bundle": true},
	// cert-manager Certificates, whose renewals of a source's CA the
	// function foresees.
	certmanager.Group: {certmanager.KindCertificate: true},
}
