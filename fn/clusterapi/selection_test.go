package clusterapi

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

func TestCheckSelector(t *testing.T) {
	policyRef := kube.Ref{APIVersion: policy.APIVersion, Kind: policy.Kind, Name: "p"}
	selecting := func(c policy.ClusterAPI, sel kube.Selector) policy.ClusterAPI {
		c.Selector = &sel
		return c
	}
	prod := kube.Selector{MatchLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "prod"}}
	dev := kube.Selector{MatchLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "dev"}}
	// The KCP and the EtcdadmCluster carry cluster-name prod; a local-config
	// copy of the KCP is never a candidate.
	local := strings.Replace(kcpV1beta1, "metadata:\n", "metadata:\n  annotations: {config.kubernetes.io/local-config: \"true\"}\n", 1)
	onlyKinds := cfg(30)
	onlyKinds.Kinds = []string{policy.KindEtcdadmCluster}
	design := cfg(30)
	design.EKSAnywhereDesignFields = true
	for _, tc := range []struct {
		name  string
		c     policy.ClusterAPI
		items string
		want  string // "" for no warning
	}{
		{"no selector", cfg(30), docs(kcpV1beta1, etcdadmCluster), ""},
		{"a match", selecting(cfg(30), prod), docs(kcpV1beta1, etcdadmCluster), ""},
		{"no match", selecting(cfg(30), dev), docs(kcpV1beta1, etcdadmCluster, etcdTemplate),
			`clusterAPI.selector "cluster.x-k8s.io/cluster-name=dev" matches none of the 2 candidate object(s) in the input (1 KubeadmControlPlane, 0 KubeadmControlPlaneTemplate, 1 EtcdadmCluster)`},
		{"no candidate at all", selecting(cfg(30), dev), docs(etcdTemplate, local),
			`matches none of the 0 candidate object(s) in the input (0 KubeadmControlPlane, 0 KubeadmControlPlaneTemplate, 0 EtcdadmCluster)`},
		{"only the kinds listed count", selecting(onlyKinds, dev), docs(kcpV1beta1, etcdadmCluster),
			`matches none of the 1 candidate object(s) in the input (1 EtcdadmCluster)`},
		{"the EKS Anywhere Cluster with the design fields", selecting(design, dev), docs(etcdadmCluster, "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: prod}\n"),
			`(0 KubeadmControlPlane, 0 KubeadmControlPlaneTemplate, 1 EtcdadmCluster, 1 Cluster.anywhere.eks.amazonaws.com)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := CheckSelector(parse(t, tc.items), tc.c, policyRef)
			if tc.want == "" {
				if res != nil {
					t.Fatalf("want no warning, got %s", res.Message)
				}
				return
			}
			if res == nil {
				t.Fatal("want a warning")
			}
			if res.Severity != framework.Warning || res.Field.Path != "spec.clusterAPI.selector" || res.ResourceRef.Name != "p" || !strings.Contains(res.Message, tc.want) {
				t.Errorf("got %s %s %s: %s, want a warning at the policy's spec.clusterAPI.selector containing %q", res.Severity, res.ResourceRef.Name, res.Field.Path, res.Message, tc.want)
			}
		})
	}
}
