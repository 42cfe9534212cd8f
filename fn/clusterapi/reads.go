package clusterapi

import "github.com/rotate-certs/rotate-certs/fn/kube"

// Reads declares what spec.clusterAPI reads of the input: every object of
// Cluster API's groups (cluster.x-k8s.io and its providers') and of EKS
// Anywhere's, and every machine template, whatever its group: an
// EtcdadmCluster's infrastructure template may live in a provider's own
// API group (find).
func Reads() kube.Reads {
	return kube.Reads{
		GroupSuffixes: []string{groupCluster, "eks.amazonaws.com"},
		KindSuffixes:  []string{templateSuffix},
	}
}

// templateSuffix ends the name of every machine template kind
// (VSphereMachineTemplate, KubeadmControlPlaneTemplate): the etcd roll's
// copies are of one.
const templateSuffix = "Template"

// ExpiryReads declares what reading machines' certificate expiry reads:
// Cluster API Machines (IsMachine), their bootstrap configs
// (MachineExpiry) and EKS Anywhere Clusters (IsEKSACluster), which the
// expiry report reads too.
func ExpiryReads() kube.Reads {
	return kube.Reads{
		Kinds:  []kube.GroupKind{{Group: groupCluster, Kind: kindMachine}, {Group: groupEKSAnywhere, Kind: kindCluster}},
		Groups: []string{groupBootstrap},
	}
}
