package clusterapi

import (
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// API groups of the kinds this package reads and writes: those of the
// machine-kind table (kube.MachineKinds, where each kind's versions and
// fields are), and groupBootstrap (machineexpiry.go).
const (
	groupCluster      = kube.GroupCluster
	groupControlPlane = kube.GroupControlPlane
	groupEtcdCluster  = kube.GroupEtcdCluster
	groupEKSAnywhere  = kube.GroupEKSAnywhere

	kindMachine = "Machine"
	kindCluster = "Cluster"
)

// Labels and annotations of Cluster API and etcdadm-controller.
const (
	// etcdClusterLabel marks the Machines of an EtcdadmCluster (value: its
	// name).
	etcdClusterLabel = "cluster.x-k8s.io/etcd-cluster"
	// copiedFromAnnotation marks an infrastructure template that rotate-certs
	// copied to roll etcd machines; its value is the name of the template
	// it was copied from.
	copiedFromAnnotation = "rotate-certs.dev/copied-from"
	// replacesAnnotation on such a copy lists the etcd machines it was
	// made to replace (sorted, comma-separated): while every due machine
	// is among them, the roll is in progress and no new copy is made.
	replacesAnnotation = "rotate-certs.dev/replaces-machines"
)

// machineKind returns the row of the machine-kind table of node's
// group and kind, and node's API version.
func machineKind(node *yaml.RNode) (kube.MachineKind, string, bool) {
	group, version := splitAPIVersion(node.GetApiVersion())
	k, ok := kube.MachineKinds().Lookup(group, node.GetKind())
	return k, version, ok
}

// Fields of the EKS Anywhere certificate auto-renewal design
// (aws/eks-anywhere designs/auto-certs-renewal.md), absent from released
// CRDs.
var (
	etcdadmDesignExpiry = []string{"spec", "rolloutBefore", "certificatesExpiryDays"}
	eksaDesignEnabled   = []string{"spec", "certificatesConfiguration", "rolloutBeforeExpiry", "enabled"}
)

// infrastructureTemplate is the field the etcd roll reads and rewrites.
var infrastructureTemplate = []string{"spec", "infrastructureTemplate"}

// splitAPIVersion returns the group and version of an apiVersion ("" group
// for the core group).
func splitAPIVersion(apiVersion string) (group, version string) {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}
