package inventory

import (
	"github.com/rotate-certs/rotate-certs/fn/clusterapi"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// machine records a Cluster API Machine's certificate expiry, as
// package clusterapi reads it: from the Machine, or from its bootstrap
// config in items (the entry is then that object's, about the machine's
// certificates).
func (s *scanner) machine(item *yaml.RNode, items []*yaml.RNode) {
	if s.bootstrap == nil {
		s.bootstrap = clusterapi.IndexBootstrapConfigs(items)
	}
	ref := kube.RefOf(item)
	st, found, err := clusterapi.MachineExpiry(item, s.bootstrap.Of(item))
	if err != nil {
		s.fieldProblem(st.Source, err)
		return
	}
	if !found {
		return
	}
	subject := "machine certificates"
	if st.Source != ref {
		subject = "certificates of machine " + kube.Safe(ref.Name)
	}
	s.inv.Expiries = append(s.inv.Expiries, Expiry{Ref: st.Source, Field: st.Field, Subject: subject, notAfter: st.Expiry})
}

// eksaCluster records an EKS Anywhere Cluster's
// status.clusterCertificateInfo: one entry per control-plane or etcd
// machine, with the days left until its certificates expire (a count, not
// a date). An entry that cannot be read is a problem; the others are
// still recorded.
func (s *scanner) eksaCluster(item *yaml.RNode) {
	ref := kube.RefOf(item)
	entries, err := clusterapi.CertificateInfo(item)
	if err != nil {
		s.fieldProblem(ref, err)
		return
	}
	for _, e := range entries {
		if e.Err != nil {
			s.fieldProblem(ref, e.Err)
			continue
		}
		days := e.ExpiresInDays
		s.inv.Expiries = append(s.inv.Expiries, Expiry{Ref: ref, Field: e.Field, Subject: "certificates of machine " + kube.Safe(e.Machine), inDays: &days})
	}
}

// fieldProblem records err, a *kube.FieldError, as a problem with a
// reported expiry at its field.
func (s *scanner) fieldProblem(ref kube.Ref, err error) {
	field, msg := kube.SplitFieldError(err, "")
	s.inv.Problems = append(s.inv.Problems, Problem{Ref: ref, Field: field, Message: msg, Expiry: true})
}
