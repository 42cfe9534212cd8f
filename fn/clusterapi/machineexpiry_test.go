package clusterapi

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fieldError returns "field: message" of a *kube.FieldError, or the
// error's text with a marker when it is not one.
func fieldError(err error) string {
	var fe *kube.FieldError
	if !errors.As(err, &fe) {
		return "not a field error: " + err.Error()
	}
	return fe.Field + ": " + fe.Err.Error()
}

const expiryAnnotationField = "metadata.annotations[machine.cluster.x-k8s.io/certificates-expiry]"

// TestMachine: the rules of the Cluster API Machine controller
// (reconcileCertificateExpiry) - the Machine's annotation wins whenever it
// is present, even empty; else the annotation of the bootstrap config its
// spec.bootstrap.configRef names, where KubeadmControlPlane records it;
// else the status the controller copied from one of them - and a date is
// read as written.
func TestMachine(t *testing.T) {
	machine := func(annotations, status string) string {
		return "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata:\n  name: m\n  namespace: ns\n" + annotations +
			"spec:\n  bootstrap:\n    configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, name: m-boot, namespace: ns}\n" + status
	}
	annotated := func(v string) string { return "  annotations:\n    " + expiryAnnotation + ": " + v + "\n" }
	config := func(group, name, namespace, annotations string) string {
		return "---\napiVersion: " + group + "/v1beta1\nkind: KubeadmConfig\nmetadata:\n  name: " + name + "\n  namespace: " + namespace + "\n" + annotations
	}
	boot := config("bootstrap.cluster.x-k8s.io", "m-boot", "ns", annotated(`"2026-10-01T00:00:00Z"`))
	const status = "status:\n  certificatesExpiryDate: \"2027-11-01T00:00:00Z\"\n"
	v1beta2 := strings.Replace(machine("", status), "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, name: m-boot, namespace: ns",
		"apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfig, name: m-boot", 1)
	const machineRef, bootRef = "Machine ns/m", "KubeadmConfig ns/m-boot"
	cases := []struct {
		name, doc           string
		found               bool
		source, field, when string
		err                 string
	}{
		{name: "annotation wins", doc: machine(annotated(`"2026-12-01T01:00:00+01:00"`), status) + boot, found: true, source: machineRef, field: expiryAnnotationField, when: "2026-12-01T00:00:00Z"},
		{name: "status", doc: machine("", status), found: true, source: machineRef, field: "status.certificatesExpiryDate", when: "2027-11-01T00:00:00Z"},
		{name: "the bootstrap config's annotation wins over the status", doc: machine("", status) + boot,
			found: true, source: bootRef, field: expiryAnnotationField, when: "2026-10-01T00:00:00Z"},
		{name: "the bootstrap config's annotation without a status", doc: machine("", "") + boot,
			found: true, source: bootRef, field: expiryAnnotationField, when: "2026-10-01T00:00:00Z"},
		{name: "a v1beta2 configRef (apiGroup)", doc: v1beta2 + boot, found: true, source: bootRef, field: expiryAnnotationField, when: "2026-10-01T00:00:00Z"},
		{name: "a config of another name is not the Machine's", doc: machine("", status) + config("bootstrap.cluster.x-k8s.io", "other", "ns", annotated(`"2026-10-01T00:00:00Z"`)),
			found: true, source: machineRef, field: "status.certificatesExpiryDate", when: "2027-11-01T00:00:00Z"},
		{name: "a config of another namespace is not the Machine's", doc: machine("", status) + config("bootstrap.cluster.x-k8s.io", "m-boot", "other", annotated(`"2026-10-01T00:00:00Z"`)),
			found: true, source: machineRef, field: "status.certificatesExpiryDate", when: "2027-11-01T00:00:00Z"},
		{name: "a config of another group is not the Machine's", doc: machine("", status) + config("example.com", "m-boot", "ns", annotated(`"2026-10-01T00:00:00Z"`)),
			found: true, source: machineRef, field: "status.certificatesExpiryDate", when: "2027-11-01T00:00:00Z"},
		{name: "a config without the annotation", doc: machine("", status) + config("bootstrap.cluster.x-k8s.io", "m-boot", "ns", ""),
			found: true, source: machineRef, field: "status.certificatesExpiryDate", when: "2027-11-01T00:00:00Z"},
		{name: "nothing stated", doc: machine("", "status: {phase: Running}\n")},
		{name: "empty status date", doc: machine("", "status: {certificatesExpiryDate: \"\"}\n")},
		{name: "an empty annotation still wins", doc: machine(annotated(`""`), status) + boot, source: machineRef,
			err: expiryAnnotationField + `: "" is not an RFC 3339 date such as 2027-01-31T00:00:00Z`},
		{name: "a bootstrap config's bad date", doc: machine("", status) + config("bootstrap.cluster.x-k8s.io", "m-boot", "ns", annotated("soon")), source: bootRef,
			err: expiryAnnotationField + `: "soon" is not an RFC 3339 date`},
		{name: "spaces are not trimmed", doc: machine(annotated(`" 2026-12-01T00:00:00Z"`), ""), source: machineRef,
			err: expiryAnnotationField + `: " 2026-12-01T00:00:00Z" is not an RFC 3339 date`},
		{name: "a date without a time", doc: machine("", "status: {certificatesExpiryDate: \"2026-12-01\"}\n"), source: machineRef,
			err: `status.certificatesExpiryDate: "2026-12-01" is not an RFC 3339 date`},
		{name: "status not an object", doc: machine("", "status: [a]\n"), source: machineRef, err: "status: must be an object"},
		{name: "date not a string", doc: machine("", "status: {certificatesExpiryDate: {a: b}}\n"), source: machineRef, err: "status.certificatesExpiryDate: must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []*yaml.RNode
			for _, doc := range strings.Split(tc.doc, "---\n") {
				nodes = append(nodes, yaml.MustParse(doc))
			}
			s, found, err := MachineExpiry(nodes[0], IndexBootstrapConfigs(nodes).Of(nodes[0]))
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(fieldError(err), tc.err) {
					t.Fatalf("error %v, want one starting %q", err, tc.err)
				}
				if found || s.Source.String() != tc.source {
					t.Errorf("found %v, source %s; want not found, source %s", found, s.Source, tc.source)
				}
				return
			}
			if err != nil || found != tc.found {
				t.Fatalf("found %v, error %v; want found %v", found, err, tc.found)
			}
			if !found {
				return
			}
			if s.Source.String() != tc.source || s.Field != tc.field || s.Expiry.Format(time.RFC3339) != tc.when || s.Expiry.Location() != time.UTC {
				t.Errorf("statement %+v, want %s %s at %s (UTC)", s, tc.source, tc.field, tc.when)
			}
		})
	}
}

// TestCertificateInfo: each entry is read on its own; one that cannot be
// read names its field and does not hide the others.
func TestCertificateInfo(t *testing.T) {
	const head = "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: prod}\n"
	entries, err := CertificateInfo(yaml.MustParse(head + `status:
  clusterCertificateInfo:
  - {machine: prod-etcd-a, expiresInDays: 12}
  - {machine: prod-cp-b, expiresInDays: -3}
  - {machine: prod-cp-c, expiresInDays: soon}
  - {expiresInDays: 5}
  - {machine: prod-cp-d}
  - just-a-name
  - {machine: prod-cp-e, expiresInDays: 36501}
  - {machine: prod-cp-f, expiresInDays: 99999999999999999999}
  - {machine: prod-cp-g, expiresInDays: "7"}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.Err != nil {
			got = append(got, fieldError(e.Err))
			continue
		}
		got = append(got, e.Field+" "+e.Machine+" "+strconv.Itoa(e.ExpiresInDays))
	}
	want := []string{
		"status.clusterCertificateInfo[0] prod-etcd-a 12",
		"status.clusterCertificateInfo[1] prod-cp-b -3",
		`status.clusterCertificateInfo[2].expiresInDays: "soon" is not a whole number of days`,
		"status.clusterCertificateInfo[3].machine: required: the name of a machine",
		"status.clusterCertificateInfo[4].expiresInDays: required: a whole number of days",
		"status.clusterCertificateInfo[5]: must be an object",
		"status.clusterCertificateInfo[6].expiresInDays: 36501 days is out of range: at most 36500 (100 years) either way",
		"status.clusterCertificateInfo[7].expiresInDays: 99999999999999999999 days is out of range: at most 36500 (100 years) either way",
		"status.clusterCertificateInfo[8] prod-cp-g 7",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	for doc, want := range map[string]string{
		head + "status: {clusterCertificateInfo: {machine: a}}\n": "status.clusterCertificateInfo: must be a list",
		head + "status: x\n": "status: must be an object",
	} {
		if _, err := CertificateInfo(yaml.MustParse(doc)); err == nil || fieldError(err) != want {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	if entries, err := CertificateInfo(yaml.MustParse(head + "status: {phase: Ready}\n")); err != nil || entries != nil {
		t.Errorf("no list: %v, %v; want none", entries, err)
	}
}

func TestKinds(t *testing.T) {
	for doc, want := range map[string][2]bool{
		"apiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine":            {true, false},
		"apiVersion: example.com/v1\nkind: Machine":                      {false, false},
		"apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster": {false, true},
		"apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster":            {false, false},
		"apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Machine": {false, false},
	} {
		n := yaml.MustParse(doc)
		if got := [2]bool{IsMachine(n), IsEKSACluster(n)}; got != want {
			t.Errorf("%q: IsMachine, IsEKSACluster = %v, want %v", doc, got, want)
		}
	}
}
