// machineexpiry.go reads what Cluster API and EKS Anywhere state about
// when a machine's certificates expire: a Machine's
// machine.cluster.x-k8s.io/certificates-expiry annotation, else the same
// annotation on its bootstrap config (where KubeadmControlPlane records
// it), else status.certificatesExpiryDate, and an EKS Anywhere Cluster's
// status.clusterCertificateInfo. It is the one reader of those fields: the
// certificate inventory (fn/inventory) and the etcd roll (fn/clusterapi) both take
// their statements from it, so they accept and refuse the same values.
//
// A value that cannot be read is a *kube.FieldError naming its field; what
// it means (a warning in a report, an error that stops a roll) is the
// caller's to decide.

package clusterapi

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// expiryAnnotation is Cluster API's override of a Machine's certificate expiry;
// when present it wins over status.certificatesExpiryDate, as it does in
// the Machine controller.
const expiryAnnotation = "machine.cluster.x-k8s.io/certificates-expiry"

// Fields read.
var (
	statusExpiry    = []string{"status", "certificatesExpiryDate"}
	certificateInfo = []string{"status", "clusterCertificateInfo"}
)

// IsMachine reports whether node is a Cluster API Machine (any version).
func IsMachine(node *yaml.RNode) bool {
	return node.GetKind() == kindMachine && kube.GroupOf(node.GetApiVersion()) == groupCluster
}

// IsEKSACluster reports whether node is an EKS Anywhere Cluster (any
// version).
func IsEKSACluster(node *yaml.RNode) bool {
	return node.GetKind() == kindCluster && kube.GroupOf(node.GetApiVersion()) == groupEKSAnywhere
}

// groupBootstrap is the API group of Cluster API's bootstrap configs
// (KubeadmConfig, EtcdadmConfig and the other bootstrap providers').
const groupBootstrap = "bootstrap.cluster.x-k8s.io"

// ExpiryStatement is what a Machine states about when its certificates expire.
type ExpiryStatement struct {
	// Source is the object that states it: the Machine, or its bootstrap
	// config.
	Source kube.Ref
	// Field is where Source says so: the annotation
	// (metadata.annotations[machine.cluster.x-k8s.io/certificates-expiry])
	// or status.certificatesExpiryDate.
	Field string
	// value is the date as written.
	value string
	// Expiry is the date, in UTC.
	Expiry time.Time
}

// MachineExpiry reads a Machine's statement as the Cluster API Machine
// controller derives status.certificatesExpiryDate (reconcileCertificateExpiry):
// the Machine's annotation when it is present (even empty), else the
// annotation of its bootstrap config - bootstrap, nil when the input does
// not hold it (BootstrapConfigs.Of) - where KubeadmControlPlane records
// the expiry of each control-plane machine's certificates, else
// status.certificatesExpiryDate, which the controller copied from one of
// them. The value is an RFC 3339 date, taken as written (no surrounding
// spaces). found is false when nothing states a date. With an error,
// s.Source still names the object whose field is wrong.
func MachineExpiry(node, bootstrap *yaml.RNode) (s ExpiryStatement, found bool, err error) {
	s.Source = kube.RefOf(node)
	annotated := func(n *yaml.RNode) bool {
		v, ok := n.GetAnnotations(expiryAnnotation)[expiryAnnotation]
		s.Field, s.value = kube.AnnotationField(expiryAnnotation), v
		return ok
	}
	switch {
	case annotated(node):
	case bootstrap != nil && annotated(bootstrap):
		s.Source = kube.RefOf(bootstrap)
	default:
		s.Field = kube.JoinPath(statusExpiry)
		if s.value, err = kube.StringAt(node, statusExpiry); err != nil || s.value == "" {
			return ExpiryStatement{Source: s.Source}, false, err
		}
	}
	if s.Expiry, err = parseDate(s.value); err != nil {
		return ExpiryStatement{Source: s.Source}, false, &kube.FieldError{Field: s.Field, Err: err}
	}
	return s, true, nil
}

// BootstrapConfigs are the bootstrap configs of an input (the objects of
// Cluster API's bootstrap group, local-config dumps included), by kind,
// namespace and name, for finding each Machine's.
type BootstrapConfigs map[kube.Key]*yaml.RNode

// IndexBootstrapConfigs returns the objects of items in Cluster API's
// bootstrap group.
func IndexBootstrapConfigs(items []*yaml.RNode) BootstrapConfigs {
	out := BootstrapConfigs{}
	for _, it := range items {
		if kube.GroupOf(it.GetApiVersion()) == groupBootstrap {
			out[kube.KeyOf(it)] = it
		}
	}
	return out
}

// Of returns the bootstrap config that machine's spec.bootstrap.configRef
// names (v1beta1: apiVersion, kind and name; v1beta2: apiGroup, kind and
// name), in the Machine's namespace as Cluster API looks it up; nil when
// the input does not hold it.
func (b BootstrapConfigs) Of(machine *yaml.RNode) *yaml.RNode {
	if len(b) == 0 {
		return nil
	}
	at := func(f string) string {
		v, _ := kube.StringAt(machine, []string{"spec", "bootstrap", "configRef", f})
		return v
	}
	group := at("apiGroup")
	if group == "" {
		group = kube.GroupOf(at("apiVersion"))
	}
	if group != groupBootstrap {
		return nil
	}
	return b[kube.Key{Kind: at("kind"), Namespace: kube.KeyOf(machine).Namespace, Name: at("name")}]
}

// parseDate parses an expiry date as Cluster API writes and reads it
// (RFC 3339), in UTC.
func parseDate(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s is not an RFC 3339 date such as 2027-01-31T00:00:00Z", kube.Quote(s))
	}
	return t.UTC(), nil
}

// CertificateInfoEntry is one entry of an EKS Anywhere Cluster's
// status.clusterCertificateInfo: the days left until one control-plane or
// etcd machine's certificates expire, as of the cluster controller's last
// certificate scan.
type CertificateInfoEntry struct {
	// Field is the entry's field path, "status.clusterCertificateInfo[i]".
	Field string
	// Machine is the machine's name.
	Machine string
	// ExpiresInDays is the count of days left (negative once expired).
	ExpiresInDays int
	// Err is why the entry cannot be read, a *kube.FieldError at the entry
	// or one of its fields; the fields above but Field are then unset.
	Err error
}

// CertificateInfo reads an EKS Anywhere Cluster's
// status.clusterCertificateInfo: {machine, expiresInDays} per machine, as
// the cluster controller writes it. An absent list is none; a list that is
// not one is the error. Each entry is read on its own, so that one that
// cannot be read (CertificateInfoEntry.Err) does not hide the others: an entry must be an
// object with a machine name and a whole number of days (parseDays).
func CertificateInfo(node *yaml.RNode) ([]CertificateInfoEntry, error) {
	list, err := kube.NodeAt(node, certificateInfo)
	if err != nil || list == nil {
		return nil, err
	}
	base := kube.JoinPath(certificateInfo)
	if list.YNode().Kind != yaml.SequenceNode {
		return nil, kube.FieldErrorf(base, "must be a list")
	}
	elems, err := list.Elements()
	if err != nil {
		return nil, &kube.FieldError{Field: base, Err: err}
	}
	out := make([]CertificateInfoEntry, 0, len(elems))
	for i, e := range elems {
		out = append(out, readEntry(e, fmt.Sprintf("%s[%d]", base, i)))
	}
	return out, nil
}

func readEntry(e *yaml.RNode, field string) CertificateInfoEntry {
	fail := func(err error) CertificateInfoEntry { return CertificateInfoEntry{Field: field, Err: err} }
	if e.YNode().Kind != yaml.MappingNode {
		return fail(kube.FieldErrorf(field, "must be an object"))
	}
	name, err := kube.StringAt(e, []string{"machine"})
	if err != nil || name == "" {
		return fail(kube.FieldErrorf(field+".machine", "required: the name of a machine"))
	}
	raw, _ := kube.NodeAt(e, []string{"expiresInDays"})
	if raw == nil || raw.YNode().Kind != yaml.ScalarNode {
		return fail(kube.FieldErrorf(field+".expiresInDays", "required: a whole number of days"))
	}
	days, err := parseDays(raw.YNode().Value)
	if err != nil {
		return fail(&kube.FieldError{Field: field + ".expiresInDays", Err: err})
	}
	return CertificateInfoEntry{Field: field, Machine: name, ExpiresInDays: days}
}

// maxDays bounds a count of days read from the input (an EKS Anywhere
// Cluster's expiresInDays): 36500 days, 100 years either way. That is far
// beyond any certificate's life and far inside what a time.Duration holds
// (about 106751 days), so a date plus such a count never overflows; a
// larger count multiplied into nanoseconds wrapped around
// (9223372036854775807 days read as expired).
const maxDays = 36500

// parseDays reads a whole number of days, at most maxDays either way.
func parseDays(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s is not a whole number of days", kube.Quote(s))
	}
	if err != nil || n > maxDays || n < -maxDays {
		return 0, fmt.Errorf("%s days is out of range: at most %d (100 years) either way", s, maxDays)
	}
	return int(n), nil
}
