package clusterapi

import (
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/policy"
)

// API groups of the kinds this package reads and writes (groupCluster, of
// Machines, is machineexpiry.go's).
const (
	groupControlPlane = "controlplane.cluster.x-k8s.io"
	groupEtcdCluster  = "etcdcluster.cluster.x-k8s.io"
	groupEKSAnywhere  = "anywhere.eks.amazonaws.com"

	kindMachine = "Machine"
	kindCluster = "Cluster"
)

// Labels and annotations of Cluster API and etcdadm-controller.
const (
	// etcdClusterLabel marks the Machines of an EtcdadmCluster (value: its
	// name).
	etcdClusterLabel = "cluster.x-k8s.io/etcd-cluster"
	// CopiedFromAnnotation marks an infrastructure template that rotate-certs
	// copied to roll etcd machines; its value is the name of the template
	// it was copied from.
	CopiedFromAnnotation = "rotate-certs.dev/copied-from"
	// ReplacesAnnotation on such a copy lists the etcd machines it was
	// made to replace (sorted, comma-separated): while every due machine
	// is among them, the roll is in progress and no new copy is made.
	ReplacesAnnotation = "rotate-certs.dev/replaces-machines"
)

// kcpPaths are the fields of one KubeadmControlPlane(Template) version.
type kcpPaths struct {
	// expiry is certificatesExpiryDays.
	expiry []string
	// validity is certificateValidityPeriodDays.
	validity []string
}

// kcpVersions maps kind and apiVersion of the kubeadm control plane kinds to
// their fields, as in the CRDs of sigs.k8s.io/cluster-api: v1beta1 has
// spec.rolloutBefore, v1beta2 spec.rollout.before; a template nests the same
// spec under spec.template.spec.
var kcpVersions = map[string]map[string]kcpPaths{
	policy.KindKubeadmControlPlane: {
		"v1beta1": {
			expiry:   []string{"spec", "rolloutBefore", "certificatesExpiryDays"},
			validity: []string{"spec", "kubeadmConfigSpec", "clusterConfiguration", "certificateValidityPeriodDays"},
		},
		"v1beta2": {
			expiry:   []string{"spec", "rollout", "before", "certificatesExpiryDays"},
			validity: []string{"spec", "kubeadmConfigSpec", "clusterConfiguration", "certificateValidityPeriodDays"},
		},
	},
	policy.KindKubeadmControlPlaneTemplate: {
		"v1beta1": {
			expiry:   []string{"spec", "template", "spec", "rolloutBefore", "certificatesExpiryDays"},
			validity: []string{"spec", "template", "spec", "kubeadmConfigSpec", "clusterConfiguration", "certificateValidityPeriodDays"},
		},
		"v1beta2": {
			expiry:   []string{"spec", "template", "spec", "rollout", "before", "certificatesExpiryDays"},
			validity: []string{"spec", "template", "spec", "kubeadmConfigSpec", "clusterConfiguration", "certificateValidityPeriodDays"},
		},
	},
}

// etcdadmVersions are the served versions of EtcdadmCluster
// (aws/etcdadm-controller); both carry spec.infrastructureTemplate.
var etcdadmVersions = map[string]bool{"v1beta1": true, "v1alpha3": true}

// eksaVersions are the versions of the EKS Anywhere Cluster.
var eksaVersions = map[string]bool{"v1alpha1": true}

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
