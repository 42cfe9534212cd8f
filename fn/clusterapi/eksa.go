package clusterapi

import (
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// planEKSA writes the EKS Anywhere design's opt-in,
// spec.certificatesConfiguration.rolloutBeforeExpiry.enabled: true, on an EKS
// Anywhere Cluster (only with eksAnywhereDesignFields).
func (a *applier) planEKSA(node *yaml.RNode, ref kube.Ref) {
	field := kube.JoinPath(eksaDesignEnabled)
	n, err := kube.NodeAt(node, eksaDesignEnabled)
	if err != nil {
		a.fieldErr(ref, field, err)
		return
	}
	if n != nil {
		y := n.YNode()
		if y.Kind != yaml.ScalarNode || y.ShortTag() != yaml.NodeTagBool {
			a.errorf(ref, field, "must be true or false")
			return
		}
		if y.Value == "true" {
			a.infof(ref, field, "already enabled (%s)", designFieldNote)
			return
		}
	}
	a.edits = append(a.edits, func() error {
		_, err := setScalar(node, eksaDesignEnabled, "true", yaml.NodeTagBool)
		return err
	})
	a.infof(ref, field, "set to true: %s. The design rolls machines 7 days before expiry; certificatesExpiryDays does not tune it", designFieldNote)
}
