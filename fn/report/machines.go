package report

import (
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
		s.problem(ref, field, "%q is not an RFC 3339 time", value)
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
		days, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil {
			s.problem(ref, field+".expiresInDays", "%q is not a whole number of days", raw)
			continue
		}
		if machine == "" {
			machine = fmt.Sprintf("#%d", i)
		}
		s.inv.Expiries = append(s.inv.Expiries, Expiry{Ref: ref, Field: field, Subject: "certificates of machine " + machine, InDays: &days})
	}
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
