package clusterapi

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Roles of a machine, for messages: the etcd roll acts on etcd machines
// only.
const (
	roleEtcd         = "etcd"
	roleControlPlane = "control-plane"
	roleOther        = ""
)

// machine is what the etcd roll knows of a Cluster API Machine in the
// input.
type machine struct {
	ref kube.Ref
	// etcdCluster is the EtcdadmCluster the machine belongs to (by owner
	// reference or the cluster.x-k8s.io/etcd-cluster label), if any.
	etcdCluster *kube.Key
	role        string
}

// classify reads the role of a Machine: an etcd machine is owned by an
// EtcdadmCluster or carries its label (etcdadm-controller sets both); a
// control-plane machine carries the cluster.x-k8s.io/control-plane label or
// is owned by a KubeadmControlPlane.
func classify(node *yaml.RNode) machine {
	m := machine{ref: kube.RefOf(node), role: roleOther}
	labels := node.GetLabels()
	owners, _ := kube.NodeAt(node, []string{"metadata", "ownerReferences"})
	var ownerKinds []string
	if owners != nil {
		elems, _ := owners.Elements()
		for _, o := range elems {
			kind, _ := kube.StringAt(o, []string{"kind"})
			name, _ := kube.StringAt(o, []string{"name"})
			apiVersion, _ := kube.StringAt(o, []string{"apiVersion"})
			group, _ := splitAPIVersion(apiVersion)
			ownerKinds = append(ownerKinds, kind)
			if kind == "EtcdadmCluster" && group == groupEtcdCluster && kube.ValidObjectName(name) && m.etcdCluster == nil {
				m.etcdCluster = &kube.Key{Kind: "EtcdadmCluster", Namespace: m.ref.Namespace, Name: name}
			}
		}
	}
	if name := labels[etcdClusterLabel]; kube.ValidObjectName(name) && m.etcdCluster == nil {
		m.etcdCluster = &kube.Key{Kind: "EtcdadmCluster", Namespace: m.ref.Namespace, Name: name}
	}
	_, cpLabel := labels["cluster.x-k8s.io/control-plane"]
	switch {
	case m.etcdCluster != nil:
		m.role = roleEtcd
	case cpLabel || slices.Contains(ownerKinds, "KubeadmControlPlane"):
		m.role = roleControlPlane
	}
	return m
}

// machineEvidence reads what a Machine states about its certificates
// (MachineExpiry: its annotation, else its bootstrap config's, else
// status.certificatesExpiryDate) and the statement's source; nil evidence
// when it states nothing. A value that cannot be read is a
// *kube.FieldError naming its field of the source.
func machineEvidence(node, bootstrap *yaml.RNode, m machine) (*evidence, ExpiryStatement, error) {
	st, found, err := MachineExpiry(node, bootstrap)
	if err != nil || !found {
		return nil, st, err
	}
	return &evidence{Machine: m.ref.Name, Source: st.Source.String() + " " + st.Field, Value: st.value, Expiry: st.Expiry}, st, nil
}

// eksaCertificateInfos reads status.clusterCertificateInfo of an EKS
// Anywhere Cluster (CertificateInfo). Evidence is all or
// nothing: when any entry cannot be read, each such entry is an error
// result and none of the cluster's entries is evidence.
func (a *applier) eksaCertificateInfos(ref kube.Ref, node *yaml.RNode) ([]CertificateInfoEntry, bool) {
	entries, err := CertificateInfo(node)
	if err != nil {
		a.fieldErr(ref, "status.clusterCertificateInfo", err)
		return nil, false
	}
	ok := true
	for _, e := range entries {
		if e.Err != nil {
			a.fieldErr(ref, e.Field, e.Err)
			ok = false
		}
	}
	return entries, ok
}

// gatherEvidence reads every expiry statement in the input, reports each
// (info, or a warning inside the window) and returns them grouped by the
// EtcdadmCluster they concern. Statements about other machines are
// reported only: control-plane machines are rolled by KubeadmControlPlane,
// never by the etcd roll.
func (a *applier) gatherEvidence() {
	machines := map[string][]machine{} // by name, for EKS Anywhere statements
	bootstrap := IndexBootstrapConfigs(a.all)
	for _, node := range a.all {
		if !IsMachine(node) {
			continue
		}
		m := classify(node)
		machines[m.ref.Name] = append(machines[m.ref.Name], m)
		e, st, err := machineEvidence(node, bootstrap.Of(node), m)
		if err != nil {
			a.fieldErr(st.Source, st.Field, err)
			continue
		}
		if e == nil {
			continue
		}
		a.report(st.Source, st.Field, m, *e)
		a.addEtcdEvidence(m, "metadata.name", m.ref, *e)
	}
	for _, node := range a.all {
		if !IsEKSACluster(node) {
			continue
		}
		row, version, _ := machineKind(node)
		ref := kube.RefOf(node)
		if _, ok := row.At(version); !ok {
			// An error only where the object would be written (see
			// plan); a status of an unknown version is not read.
			switch {
			case a.writesEKSA(node):
			case a.rollsEtcd():
				a.warnf(ref, "apiVersion", "unsupported apiVersion %s of an EKS Anywhere Cluster (supported: %s): its status.clusterCertificateInfo is not read as evidence for the etcd roll", node.GetApiVersion(), row.Supported())
			default:
				a.infof(ref, "apiVersion", "unsupported apiVersion %s of an EKS Anywhere Cluster (supported: %s): not read, and not managed by this policy", node.GetApiVersion(), row.Supported())
			}
			continue
		}
		infos, ok := a.eksaCertificateInfos(ref, node)
		if !ok {
			continue
		}
		for _, info := range infos {
			m := a.eksaMachine(ref, info.Machine, machines)
			days := info.ExpiresInDays
			e := evidence{
				Machine: info.Machine,
				Source:  ref.String() + " " + info.Field,
				Value:   fmt.Sprintf("expiresInDays=%d", days),
				Expiry:  expiryIn(days, a.now),
				InDays:  &days,
			}
			a.report(ref, info.Field, m, e)
			a.addEtcdEvidence(m, info.Field, ref, e)
		}
	}
}

// addEtcdEvidence records e as evidence for the etcd roll of m's etcd
// cluster, if m belongs to one. A machine whose name is not a valid object
// name (no API server holds one) is an error at field of where: a roll
// records the machines it replaces by name (replacesAnnotation), and a
// name the next render cannot read back would start the roll again on
// every render (found by FuzzProcess).
func (a *applier) addEtcdEvidence(m machine, field string, where kube.Ref, e evidence) {
	if m.etcdCluster == nil {
		return
	}
	if !kube.ValidObjectName(e.Machine) {
		a.errorf(where, field, "the name of an etcd machine of %s is not a valid object name (lower-case letters, digits, '-' and '.'; no API server holds such a Machine): a roll could not record it in %s; fix the snapshot of the machine",
			m.etcdCluster, replacesAnnotation)
		return
	}
	a.evidence[*m.etcdCluster] = append(a.evidence[*m.etcdCluster], e)
}

// eksaMachine finds the machine an EKS Anywhere statement is about: the
// Machine of that name in the input, else by EKS Anywhere's naming - the
// etcd machines of cluster C belong to the EtcdadmCluster "C-etcd" and are
// named after it.
func (a *applier) eksaMachine(cluster kube.Ref, name string, machines map[string][]machine) machine {
	if ms := machines[name]; len(ms) > 0 {
		return ms[0]
	}
	m := machine{ref: kube.Ref{Kind: kindMachine, Name: name}, role: roleOther}
	etcdName := cluster.Name + "-etcd"
	for _, node := range a.items {
		group, _ := splitAPIVersion(node.GetApiVersion())
		if node.GetKind() == "EtcdadmCluster" && group == groupEtcdCluster && node.GetName() == etcdName && strings.HasPrefix(name, etcdName+"-") {
			k := kube.KeyOf(node)
			m.etcdCluster, m.role = &k, roleEtcd
			m.ref.Namespace = k.Namespace
			break
		}
	}
	return m
}

// report emits the result for one statement: info with the expiry and days
// left, a warning when it is inside the window.
func (a *applier) report(where kube.Ref, field string, m machine, e evidence) {
	what := "machine " + m.ref.Name
	switch m.role {
	case roleEtcd:
		what = fmt.Sprintf("etcd machine %s of EtcdadmCluster %s", m.ref.Name, nsName(m.etcdCluster.Namespace, m.etcdCluster.Name))
	case roleControlPlane:
		what = "control-plane machine " + m.ref.Name
	}
	due := isDue(e.Expiry, a.now, a.cfg.CertificatesExpiryDays)
	var when string
	switch {
	case e.InDays != nil && *e.InDays > 0:
		when = fmt.Sprintf("certificates expire in %s (as of the cluster's last certificate scan)", plural(*e.InDays))
	case e.InDays != nil:
		// A relative statement has no date worth printing: it would be
		// the render's clock, not the certificate's.
		when = fmt.Sprintf("certificates expired (expiresInDays %d as of the cluster's last certificate scan)", *e.InDays)
	case a.now.Before(e.Expiry):
		when = fmt.Sprintf("certificates expire %s (%s)", e.Expiry.Format(time.RFC3339), leftText(e.Expiry, a.now))
	default:
		when = fmt.Sprintf("certificates expired %s (%s)", e.Expiry.Format(time.RFC3339), leftText(e.Expiry, a.now))
	}
	if !due {
		a.results = append(a.results, where.Result(framework.Info, field, what+": "+when))
		return
	}
	msg := what + ": " + when
	if a.now.Before(e.Expiry) {
		msg += fmt.Sprintf(", inside the %d-day window", a.cfg.CertificatesExpiryDays)
	}
	if m.role == roleControlPlane {
		msg += "; KubeadmControlPlane rolls it when its certificatesExpiryDays is set"
	}
	a.results = append(a.results, where.Result(framework.Warning, field, msg))
}

// nsName returns "namespace/name", or name when there is no namespace.
func nsName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
