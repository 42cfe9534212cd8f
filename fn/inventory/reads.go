package inventory

import (
	"github.com/rotate-certs/rotate-certs/fn/clusterapi"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Reads declares what the scan (Scan) reads of the input: the objects
// that keep trust outside Secrets and ConfigMaps (the inject-kind table and the
// cluster-scoped kinds of the target-kind table: trustFields), the
// Machines and EKS Anywhere Clusters whose certificate expiry package
// clusterapi reads (clusterapi.ExpiryReads), and of the kinds the
// target-kind table holds at keys (core Secrets and ConfigMaps: holdsKeys),
// manifests and local-config snapshots alike, those holding a value it
// scans (PEM, a kubeconfig's certificates) or one that does not decode (a
// problem it names). Every step that asks the run's certificate
// inventory - the chains of the trust bundles, the re-issue list, the
// alerts - reads through this declaration.
func Reads() kube.Reads { return readsWith(kube.TargetKinds()) }

// readsWith is Reads by the target-kind table targets: tests add a kind
// with it.
func readsWith(targets kube.TargetTable) kube.Reads {
	r := clusterapi.ExpiryReads()
	for _, k := range kube.InjectKinds().Rows() {
		r.Kinds = append(r.Kinds, k.GroupKind())
	}
	for _, d := range targets.Rows() {
		switch {
		case d.Store == kube.StoreKeys:
			r.Some = append(r.Some, kube.ItemRule{GroupKind: d.GroupKind(), Selects: holdsCertificates})
		case targetReader(d) != nil:
			r.Kinds = append(r.Kinds, d.GroupKind())
		}
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
