package report

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MachineExpiryAnnotation is Cluster API's override of a Machine's
// certificate expiry; when set it wins over status.certificatesExpiryDate,
// as it does in the Machine controller.
const MachineExpiryAnnotation = "machine.cluster.x-k8s.io/certificates-expiry"

// machine records a Cluster API Machine's certificate expiry.
func (s *scanner) machine(item *yaml.RNode) {
	ref := kube.RefOf(item)
	subject := "machine certificates"
	field, value := "metadata.annotations["+MachineExpiryAnnotation+"]", item.GetAnnotations(MachineExpiryAnnotation)[MachineExpiryAnnotation]
	if value == "" {
		field = "status.certificatesExpiryDate"
		v, err := item.GetString(field)
		if err != nil || v == "" {
			return
		}
		value = v
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(value))
	if err != nil {
		s.problem(ref, field, "%s is not an RFC 3339 time", kube.Quote(value))
		return
	}
	s.inv.Expiries = append(s.inv.Expiries, Expiry{Ref: ref, Field: field, Subject: subject, NotAfter: t.UTC()})
}

// eksaCluster records an EKS Anywhere Cluster's
// status.clusterCertificateInfo: one entry per control-plane or etcd
// machine, with the days left until its certificates expire (a count, not
// a date).
func (s *scanner) eksaCluster(item *yaml.RNode) {
	info, err := item.Pipe(yaml.Lookup("status", "clusterCertificateInfo"))
	if err != nil || info == nil || info.YNode().Kind != yaml.SequenceNode {
		return
	}
	ref := kube.RefOf(item)
	for i, n := range info.YNode().Content {
		e := yaml.NewRNode(n)
		field := fmt.Sprintf("status.clusterCertificateInfo[%d]", i)
		machine := scalar(e, "machine")
		raw := scalar(e, "expiresInDays")
		if raw == "" {
			s.problem(ref, field, "has no expiresInDays")
			continue
		}
		days, err := ParseDays(raw)
		if err != nil {
			s.problem(ref, field+".expiresInDays", "%v", err)
			continue
		}
		if machine == "" {
			machine = fmt.Sprintf("#%d", i)
		}
		machine = kube.Safe(machine)
		s.inv.Expiries = append(s.inv.Expiries, Expiry{Ref: ref, Field: field, Subject: "certificates of machine " + machine, InDays: &days})
	}
}

// MaxDays bounds a count of days read from the input (an EKS Anywhere
// Cluster's expiresInDays): 36500 days, 100 years either way. That is far
// beyond any certificate's life and far inside what a time.Duration holds
// (about 106751 days), so a date plus such a count never overflows; a
// larger count multiplied into nanoseconds wrapped around
// (9223372036854775807 days read as expired).
const MaxDays = 36500

// ParseDays reads a whole number of days, at most MaxDays either way.
func ParseDays(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s is not a whole number of days", kube.Quote(s))
	}
	if err != nil || n > MaxDays || n < -MaxDays {
		return 0, fmt.Errorf("%s days is out of range: at most %d (100 years) either way", s, MaxDays)
	}
	return int(n), nil
}

// scalar returns the scalar value of field in a mapping node, whatever its
// YAML type, or "".
func scalar(n *yaml.RNode, field string) string {
	f := n.Field(field)
	if f == nil || f.Value == nil || f.Value.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return f.Value.YNode().Value
}
