package clusterapi

import (
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// candidateKind returns the policy kind an input object is a candidate of
// (an object spec.clusterAPI would write if the selector matched it), ""
// for none: a KubeadmControlPlane(Template) or EtcdadmCluster of a kind cfg
// lists, and the EKS Anywhere Cluster when the design fields are on (else
// it is only read as evidence). Local-config objects are never written.
func candidateKind(node *yaml.RNode, cfg policy.ClusterAPI) string {
	if kube.IsLocalConfig(node) {
		return ""
	}
	row, _, known := machineKind(node)
	group, kind := row.Group, row.Kind
	switch {
	case !known:
	case group == groupControlPlane && row.Writes() && cfg.HasKind(kind):
		return kind
	case group == groupEtcdCluster && kind == policy.KindEtcdadmCluster && cfg.HasKind(kind):
		return kind
	case group == groupEKSAnywhere && kind == kindCluster && cfg.EKSAnywhereDesignFields && cfg.HasKind(policy.KindEKSAnywhereCluster):
		return policy.KindEKSAnywhereCluster
	}
	return ""
}

// CheckSelector returns a warning (at the policy's spec.clusterAPI.selector)
// when the selector is set and matches none of the objects spec.clusterAPI
// could write: then nothing is written, which is rarely what the policy
// means - Cluster API's own manifests do not always carry the
// cluster.x-k8s.io/cluster-name label, and EKS Anywhere's carry none. The
// warning names the selector and counts the candidates of each managed
// kind. It returns nil when there is no selector or it matches an object.
func CheckSelector(items []*yaml.RNode, cfg policy.ClusterAPI, policyRef kube.Ref) *framework.Result {
	if cfg.Selector == nil {
		return nil
	}
	seen := map[string]int{}
	total := 0
	for _, node := range items {
		kind := candidateKind(node, cfg)
		if kind == "" {
			continue
		}
		if cfg.Selects(node.GetLabels()) {
			return nil
		}
		seen[kind]++
		total++
	}
	var counts []string
	for _, k := range policy.ClusterAPIKinds {
		if k == policy.KindEKSAnywhereCluster && !cfg.EKSAnywhereDesignFields {
			continue
		}
		if cfg.HasKind(k) {
			counts = append(counts, fmt.Sprintf("%d %s", seen[k], k))
		}
	}
	return policyRef.Result(framework.Warning, "spec.clusterAPI.selector", fmt.Sprintf(
		"clusterAPI.selector %s matches none of the %d candidate object(s) in the input (%s), so spec.clusterAPI writes nothing; Cluster API manifests do not always carry the cluster.x-k8s.io/cluster-name label, and EKS Anywhere's carry no labels - check the labels of the objects, or remove the selector to manage every one",
		kube.Quote(selectorText(cfg)), total, strings.Join(counts, ", ")))
}

// selectorText is the selector in kubectl's syntax, or "{}" when empty
// (it then matches everything, so the warning never shows it).
func selectorText(cfg policy.ClusterAPI) string {
	if s := cfg.Selector.String(); s != "" {
		return s
	}
	return "{}"
}
