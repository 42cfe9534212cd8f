package clusterapi

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// planKCP sets certificatesExpiryDays on a KubeadmControlPlane or
// KubeadmControlPlaneTemplate, after checking it as the upstream webhook
// would against the object's own certificateValidityPeriodDays.
func (a *applier) planKCP(node *yaml.RNode, ref kube.Ref, paths kube.MachineVersion) {
	days := a.cfg.CertificatesExpiryDays
	field := kube.JoinPath(paths.Expiry)
	validity, validitySet, err := readInt(node, paths.Validity)
	if err != nil {
		a.fieldErr(ref, kube.JoinPath(paths.Validity), err)
		return
	}
	if err := checkExpiryDays(days, validity, validitySet); err != nil {
		a.errorf(ref, field, "cannot set certificatesExpiryDays: %v", err)
		return
	}
	current, present, err := readInt(node, paths.Expiry)
	if err != nil {
		a.fieldErr(ref, field, err)
		return
	}
	if present && current == days {
		a.infof(ref, field, "certificatesExpiryDays is already %d: control-plane machines roll %d days before their certificates expire", days, days)
		return
	}
	was := "unset"
	if present {
		was = fmt.Sprintf("was %d", current)
	}
	a.edits = append(a.edits, func() error {
		_, err := setInt(node, paths.Expiry, days)
		return err
	})
	a.infof(ref, field, "set certificatesExpiryDays to %d (%s): control-plane machines roll %d days before their certificates expire", days, was, days)
	if ref.Kind == policy.KindKubeadmControlPlaneTemplate {
		// The KubeadmControlPlaneTemplate webhook rejects any change to
		// spec.template.spec of an existing template.
		a.warnf(ref, field, "spec.template.spec of a KubeadmControlPlaneTemplate is immutable: if this template already exists in the cluster, Cluster API rejects the change. Apply it under a new name and point the ClusterClass's spec.controlPlane template reference at it (a ClusterClass rebase)")
	}
}
