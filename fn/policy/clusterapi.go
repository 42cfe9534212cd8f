package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// Kinds that spec.clusterAPI.kinds may name.
const (
	KindKubeadmControlPlane         = "KubeadmControlPlane"
	KindKubeadmControlPlaneTemplate = "KubeadmControlPlaneTemplate"
	KindEtcdadmCluster              = "EtcdadmCluster"
	// KindEKSAnywhereCluster is the EKS Anywhere Cluster, qualified by its
	// API group so that it is not read as Cluster API's Cluster, which
	// rotate-certs never writes. It is written only with
	// EKSAnywhereDesignFields.
	KindEKSAnywhereCluster = "Cluster.anywhere.eks.amazonaws.com"
)

// Limits of spec.clusterAPI.certificatesExpiryDays.
const (
	// MinCertificatesExpiryDays is the minimum Cluster API accepts (the
	// KubeadmControlPlane webhook and the v1beta2 CRD schema).
	MinCertificatesExpiryDays = 7
	// MaxCertificateValidityPeriodDays is the largest
	// certificateValidityPeriodDays the KubeadmControlPlane CRD allows; an
	// expiry window must be below the validity, so below this for any
	// object.
	MaxCertificateValidityPeriodDays = 1095
)

// ClusterAPIKinds lists the kinds spec.clusterAPI manages, in the order
// they default to.
var ClusterAPIKinds = []string{KindKubeadmControlPlane, KindKubeadmControlPlaneTemplate, KindEtcdadmCluster, KindEKSAnywhereCluster}

// ClusterAPI is spec.clusterAPI: roll Cluster API control-plane and etcd
// machines before their certificates expire.
type ClusterAPI struct {
	// CertificatesExpiryDays is written to every selected
	// KubeadmControlPlane(Template) and, with EKSAnywhereDesignFields, to
	// EtcdadmClusters; it is also the window of the evidence-driven etcd
	// roll.
	CertificatesExpiryDays int `json:"certificatesExpiryDays"`
	// Selector limits the objects by their labels; unset selects all.
	Selector *kube.Selector `json:"selector,omitempty"`
	// Kinds limits the kinds managed; default ClusterAPIKinds.
	Kinds []string `json:"kinds,omitempty"`
	// EKSAnywhereDesignFields also writes the fields proposed by the EKS
	// Anywhere certificate auto-renewal design, which released CRDs lack.
	EKSAnywhereDesignFields bool `json:"eksAnywhereDesignFields,omitempty"`
}

// HasKind reports whether kind is managed.
func (c *ClusterAPI) HasKind(kind string) bool { return slices.Contains(c.Kinds, kind) }

// Selects reports whether an object with these labels is selected.
func (c *ClusterAPI) Selects(objectLabels map[string]string) bool {
	return c.Selector == nil || c.Selector.Matches(objectLabels)
}

// defaultClusterAPI fills the unset optional fields of spec.clusterAPI.
func defaultClusterAPI(c *ClusterAPI) {
	if c == nil {
		return
	}
	if len(c.Kinds) == 0 {
		c.Kinds = append([]string(nil), ClusterAPIKinds...)
	}
}

// validateClusterAPI checks a defaulted spec.clusterAPI.
func validateClusterAPI(c *ClusterAPI) FieldErrors {
	var errs FieldErrors
	if c == nil {
		return nil
	}
	const path = "spec.clusterAPI"
	switch d := c.CertificatesExpiryDays; {
	case d == 0:
		errs.add(path+".certificatesExpiryDays", "required: the number of days before expiry at which machines are rolled (at least %d)", MinCertificatesExpiryDays)
	case d < MinCertificatesExpiryDays:
		errs.add(path+".certificatesExpiryDays", "%d is below %d, the minimum Cluster API accepts", d, MinCertificatesExpiryDays)
	case d >= MaxCertificateValidityPeriodDays:
		errs.add(path+".certificatesExpiryDays", "%d must be below %d, the longest certificate validity kubeadm can be configured with", d, MaxCertificateValidityPeriodDays)
	}
	if c.Selector != nil {
		if err := c.Selector.Validate(); err != nil {
			errs.add(path+".selector", "%v", err)
		}
	}
	seen := map[string]int{}
	for i, k := range c.Kinds {
		field := fmt.Sprintf("%s.kinds[%d]", path, i)
		j, dup := seen[k]
		switch {
		case !slices.Contains(ClusterAPIKinds, k):
			errs.add(field, "%s is not one of %s", kube.Quote(k), strings.Join(ClusterAPIKinds, ", "))
		case dup:
			errs.add(field, "duplicate kind %s (also %s.kinds[%d])", kube.Quote(k), path, j)
		}
		if !dup {
			seen[k] = i
		}
	}
	return errs
}
