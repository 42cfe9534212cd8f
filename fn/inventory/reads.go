package inventory

import (
	"github.com/rotate-certs/rotate-certs/fn/clusterapi"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Reads declares what the scan (Scan) reads of the input: the objects
// that keep trust outside Secrets and ConfigMaps (injectKinds and the
// cluster-scoped kinds of the target-kind table: trustFields), the
// Machines and EKS Anywhere Clusters whose certificate expiry package
// clusterapi reads (clusterapi.ExpiryReads), and of core Secrets and
// ConfigMaps, manifests and local-config snapshots alike, those holding a
// value it scans (PEM, a kubeconfig's certificates) or one that does not
// decode (a problem it names). Every step that asks the run's certificate
// inventory - the chains of the trust bundles, the re-issue list, the
// alerts - reads through this declaration.
func Reads() kube.Reads {
	r := clusterapi.ExpiryReads()
	for gk := range injectKinds {
		r.Kinds = append(r.Kinds, kube.GroupKind{Group: gk[0], Kind: gk[1]})
	}
	for _, d := range kube.TargetKinds().Rows() {
		if targetReader(d) != nil {
			r.Kinds = append(r.Kinds, d.GroupKind())
		}
	}
	for _, kind := range []string{"Secret", "ConfigMap"} {
		r.Some = append(r.Some, kube.ItemRule{GroupKind: kube.GroupKind{Kind: kind}, Selects: holdsCertificates})
	}
	return r
}

// holdsCertificates reports whether the scan finds something in a Secret
// or ConfigMap: a value it scans, or a value that does not decode.
func holdsCertificates(item *yaml.RNode) bool {
	if kube.StartsWithPEM(item) {
		return true // the common case, told without decoding every value
	}
	values, err := kube.Values(item)
	if err != nil {
		return true
	}
	for _, v := range values {
		if scans(v.Bytes) {
			return true
		}
	}
	return false
}
