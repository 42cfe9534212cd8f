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

// TestMachine: the rules of the Cluster API Machine controller - the
// annotation wins whenever it is present, even empty, and a date is read
// as written.
func TestMachine(t *testing.T) {
	machine := func(annotations, status string) string {
		return "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata:\n  name: m\n" + annotations + status
	}
	annotated := func(v string) string { return "  annotations:\n    " + ExpiryAnnotation + ": " + v + "\n" }
	const status = "status:\n  certificatesExpiryDate: \"2027-11-01T00:00:00Z\"\n"
	cases := []struct {
		name, doc   string
		found       bool
		field, when string
		err         string
	}{
		{name: "annotation wins", doc: machine(annotated(`"2026-12-01T01:00:00+01:00"`), status), found: true, field: expiryAnnotationField, when: "2026-12-01T00:00:00Z"},
		{name: "status", doc: machine("", status), found: true, field: "status.certificatesExpiryDate", when: "2027-11-01T00:00:00Z"},
		{name: "nothing stated", doc: machine("", "status: {phase: Running}\n")},
		{name: "empty status date", doc: machine("", "status: {certificatesExpiryDate: \"\"}\n")},
		{name: "an empty annotation still wins", doc: machine(annotated(`""`), status),
			err: expiryAnnotationField + `: "" is not an RFC 3339 date such as 2027-01-31T00:00:00Z`},
		{name: "spaces are not trimmed", doc: machine(annotated(`" 2026-12-01T00:00:00Z"`), ""),
			err: expiryAnnotationField + `: " 2026-12-01T00:00:00Z" is not an RFC 3339 date`},
		{name: "a date without a time", doc: machine("", "status: {certificatesExpiryDate: \"2026-12-01\"}\n"),
			err: `status.certificatesExpiryDate: "2026-12-01" is not an RFC 3339 date`},
		{name: "status not an object", doc: machine("", "status: [a]\n"), err: "status: must be an object"},
		{name: "date not a string", doc: machine("", "status: {certificatesExpiryDate: {a: b}}\n"), err: "status.certificatesExpiryDate: must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, found, err := MachineExpiry(yaml.MustParse(tc.doc))
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(fieldError(err), tc.err) {
					t.Fatalf("error %v, want one starting %q", err, tc.err)
				}
				if found {
					t.Error("found is true with an error")
				}
				return
			}
			if err != nil || found != tc.found {
				t.Fatalf("found %v, error %v; want found %v", found, err, tc.found)
			}
			if !found {
				return
			}
			if s.Field != tc.field || s.Expiry.Format(time.RFC3339) != tc.when || s.Expiry.Location() != time.UTC {
				t.Errorf("statement %+v, want %s at %s (UTC)", s, tc.when, tc.field)
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
