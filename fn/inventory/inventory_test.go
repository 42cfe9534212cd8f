package inventory_test

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/report"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/internal/testitems"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/rotate-certs/rotate-certs/internal/testpki/layouts"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var now = testpki.GoldenNow

func found(inv *inventory.Inventory) []string {
	var got []string
	for _, f := range inv.Certificates {
		got = append(got, fmt.Sprintf("%s %s %s", f.Ref, f.Key(), f.Cert.Subject.CommonName))
	}
	return got
}

func TestScanKubeconfig(t *testing.T) {
	inv := inventory.Scan(testitems.Items(t, layouts.CAPIKubeconfig("prod", testpki.Fixture("signer-b-1"), testpki.Fixture("kube-admin"))+`---
apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-info, namespace: kube-public}
data:
  kubeconfig: |
    apiVersion: v1
    kind: Config
    clusters:
    - cluster:
        certificate-authority-data: {{b64 "signer-a-1"}}
        server: https://10.0.0.1:6443
      name: ""
---
apiVersion: v1
kind: Secret
metadata: {name: broken-kubeconfig, namespace: default}
stringData:
  value: |
    users:
    - name: x
      user:
        client-certificate-data: bm90IGEgY2VydGlmaWNhdGU=
`))
	require.Equal(t, []string{
		"Secret default/prod-kubeconfig data.value:clusters[prod].cluster.certificate-authority-data signer-b-1",
		"Secret default/prod-kubeconfig data.value:users[prod-admin].user.client-certificate-data kube-admin",
		"ConfigMap kube-public/cluster-info data.kubeconfig:clusters[0].cluster.certificate-authority-data signer-a-1",
	}, found(inv))
	require.Len(t, inv.Problems, 1, "a kubeconfig certificate field that is not a certificate is a problem")
	require.Equal(t, "stringData.value:users[x].user.client-certificate-data", inv.Problems[0].Field)
}

func TestScanMachineAndEKSAnywhere(t *testing.T) {
	inv := inventory.Scan(testitems.Items(t, `apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata:
  name: cp-annotated
  namespace: default
  annotations:
    machine.cluster.x-k8s.io/certificates-expiry: "2026-12-01T00:00:00Z"
status:
  certificatesExpiryDate: "2027-11-01T00:00:00Z"
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: cp-status, namespace: default}
status:
  certificatesExpiryDate: "2027-11-01T00:00:00Z"
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata: {name: worker, namespace: default}
status: {phase: Running}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata:
  name: bad-date
  namespace: default
  annotations:
    machine.cluster.x-k8s.io/certificates-expiry: "next year"
---
apiVersion: example.com/v1
kind: Machine
metadata: {name: not-capi}
status:
  certificatesExpiryDate: "2020-01-01T00:00:00Z"
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata: {name: edge, namespace: default}
status:
  clusterCertificateInfo:
  - {machine: edge-etcd-1, expiresInDays: 25}
  - {machine: edge-cp-1, expiresInDays: "many"}
`))
	require.Len(t, inv.Expiries, 3)
	e := inv.Expiries[0]
	require.Equal(t, "cp-annotated", e.Ref.Name)
	require.Equal(t, "metadata.annotations[machine.cluster.x-k8s.io/certificates-expiry]", e.Field, "the annotation wins over status")
	require.Equal(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), e.At(now))
	require.Equal(t, "status.certificatesExpiryDate", inv.Expiries[1].Field)
	require.Equal(t, time.Date(2027, 11, 1, 0, 0, 0, 0, time.UTC), inv.Expiries[1].At(now))
	eksa := inv.Expiries[2]
	require.True(t, eksa.Approximate())
	require.Equal(t, now.Add(25*24*time.Hour), eksa.At(now))
	require.Equal(t, "certificates of machine edge-etcd-1", eksa.Subject)

	var problems []string
	for _, p := range inv.Problems {
		problems = append(problems, p.Ref.Name+" "+p.Field)
	}
	require.Equal(t, []string{
		"bad-date metadata.annotations[machine.cluster.x-k8s.io/certificates-expiry]",
		"edge status.clusterCertificateInfo[1].expiresInDays",
	}, problems)

	rep := report.Build(inv, nil, nil, now, 30*24*time.Hour, 7*24*time.Hour)
	var statuses []string
	for _, e := range rep.Entries {
		statuses = append(statuses, fmt.Sprintf("%s %d %s", e.Resource.Name, e.DaysLeft, e.Status))
	}
	require.Equal(t, []string{"cp-annotated 9 warn", "edge 25 warn", "cp-status 344 ok"}, statuses)
}

func TestScanValues(t *testing.T) {
	inv := inventory.Scan(testitems.Items(t, `apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: a}
type: kubernetes.io/tls
data:
  tls.crt: {{b64 "leaf-new"}}
  tls.key: {{keyb64 "leaf-new"}}
stringData:
  combined.pem: |
    {{pem 4 "leaf-old"}}
    {{key 4 "leaf-old"}}
---
apiVersion: v1
kind: Secret
metadata: {name: broken, namespace: a}
stringData:
  ca.crt: |
    -----BEGIN CERTIFICATE-----
    AAAA
    -----END CERTIFICATE-----
  signing.key: |
    -----BEGIN PRIVATE KEY-----
    AAAA
    -----END PRIVATE KEY-----
---
apiVersion: v1
kind: Secret
metadata:
  name: snapshot
  annotations: {config.kubernetes.io/local-config: "true"}
stringData:
  ca.crt: |
    {{pem 4 "ca-expired"}}
---
apiVersion: example.com/v1
kind: Secret
metadata:
  name: tool-config
  annotations: {config.kubernetes.io/local-config: "true"}
stringData:
  ca.crt: |
    {{pem 4 "ca-2025"}}
---
apiVersion: v1
kind: Secret
metadata: {name: bad-base64, namespace: a}
data:
  ca.crt: "!!!"
`))
	require.Equal(t, []string{"Secret a/tls data.tls.crt leaf-new", "Secret a/tls stringData.combined.pem leaf-old", "Secret snapshot stringData.ca.crt ca-expired"}, found(inv),
		"keys are skipped, certificates next to keys are found, a local-config Secret (a snapshot of a live one) is scanned, other local config is not")
	var problems []string
	for _, p := range inv.Problems {
		problems = append(problems, p.Ref.Name+" "+p.Field)
		require.NotContains(t, p.Message, "PRIVATE KEY")
	}
	require.Equal(t, []string{"broken stringData.ca.crt", "bad-base64 data.ca.crt"}, problems,
		"a broken certificate is a problem, a broken private key is not the report's business")
}

// TestScanParsesEachCertificateOnce: a bundle fanned out to many
// namespaces is parsed once; every occurrence shares the certificate.
func TestScanParsesEachCertificateOnce(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: ns%d}\ndata:\n  ca.crt: %s\n", i,
			base64.StdEncoding.EncodeToString(append(testpki.Fixture("ca-2026").PEM(), testpki.Fixture("ca-2025").PEM()...)))
	}
	inv := inventory.Scan(testitems.Items(t, b.String()))
	require.Len(t, inv.Certificates, 100)
	distinct := map[any]bool{}
	for _, f := range inv.Certificates {
		distinct[f.Cert] = true
	}
	require.Len(t, distinct, 2, "the same DER must give the same *x509.Certificate")
}

func BenchmarkScanFanOut(b *testing.B) {
	var sb strings.Builder
	bundle := base64.StdEncoding.EncodeToString(append(testpki.Fixture("ca-2026").PEM(), testpki.Fixture("ca-2025").PEM()...))
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&sb, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: ns%d}\ndata:\n  ca.crt: %s\n", i, bundle)
	}
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(sb.String()), OmitReaderAnnotations: true}).Read()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			inventory.Scan(nodes)
		}
	})
	b.Run("uncached-decode", func(b *testing.B) {
		raw := append(testpki.Fixture("ca-2026").PEM(), testpki.Fixture("ca-2025").PEM()...)
		for b.Loop() {
			for i := 0; i < 500; i++ {
				if _, err := pki.DecodePEM(raw); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("cached-decode", func(b *testing.B) {
		raw := append(testpki.Fixture("ca-2026").PEM(), testpki.Fixture("ca-2025").PEM()...)
		for b.Loop() {
			c := pki.NewCache()
			for i := 0; i < 500; i++ {
				if _, err := c.DecodePEM(raw); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestScanPartlyReadable: the certificates of a value are found even when
// a later block is broken, and the broken block is a problem; text that
// only mentions a PEM header is not certificate data.
func TestScanPartlyReadable(t *testing.T) {
	good := string(testpki.Fixture("ca-2026").PEM())
	truncated := good + "-----BEGIN CERTIFICATE-----\nMIIBmDCCAT6gAwIBAgIIGOpN6iK/QXQw\n"
	inv := inventory.Scan(testitems.Items(t, `apiVersion: v1
kind: Secret
metadata: {name: half, namespace: default}
data:
  ca.crt: `+base64.StdEncoding.EncodeToString([]byte(truncated))+`
---
apiVersion: v1
kind: ConfigMap
metadata: {name: docs, namespace: default}
data:
  README.md: |
    Put your CA between -----BEGIN CERTIFICATE----- and -----END CERTIFICATE----- lines.
  template.pem: |
    -----BEGIN CERTIFICATE-----
    (paste the certificate here)
`))
	require.Equal(t, []string{"Secret default/half data.ca.crt ca-2026"}, found(inv))
	require.Len(t, inv.Problems, 1)
	require.Equal(t, "half", inv.Problems[0].Ref.Name)
	require.Equal(t, "data.ca.crt", inv.Problems[0].Field)
	require.Equal(t, "the 2nd PEM block (line 11) is malformed: its END line is missing or misspelt", inv.Problems[0].Message)

	var msgs []string
	for _, r := range rotate.ExpiryResults(inv, now, 30*24*time.Hour) {
		msgs = append(msgs, string(r.Severity)+": "+r.Message)
	}
	require.Len(t, msgs, 2, "%v", msgs)
	require.True(t, strings.HasPrefix(msgs[0], `info: certificate "CN=ca-2026`), msgs[0])
	require.Equal(t, "warning: unreadable certificate data: the 2nd PEM block (line 11) is malformed: its END line is missing or misspelt", msgs[1])
}

// An EKS Anywhere expiresInDays too large for a time.Duration wrapped
// around into the past: 9223372036854775807 days was reported expired. A
// count beyond clusterapi's maxDays (100 years either way) is a problem naming
// the field; the bound itself still reads.
func TestScanDaysOutOfRange(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	inv := inventory.Scan(testitems.Items(t, `apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata: {name: edge, namespace: default}
status:
  clusterCertificateInfo:
  - {machine: a, expiresInDays: 9223372036854775807}
  - {machine: b, expiresInDays: 99999999999999999999}
  - {machine: c, expiresInDays: -36501}
  - {machine: d, expiresInDays: 36500}
`))
	require.Len(t, inv.Expiries, 1)
	require.Equal(t, "certificates of machine d", inv.Expiries[0].Subject)
	require.True(t, inv.Expiries[0].At(now).After(now))
	var problems []string
	for _, p := range inv.Problems {
		problems = append(problems, p.Field+": "+p.Message)
	}
	require.Equal(t, []string{
		"status.clusterCertificateInfo[0].expiresInDays: 9223372036854775807 days is out of range: at most 36500 (100 years) either way",
		"status.clusterCertificateInfo[1].expiresInDays: 99999999999999999999 days is out of range: at most 36500 (100 years) either way",
		"status.clusterCertificateInfo[2].expiresInDays: -36501 days is out of range: at most 36500 (100 years) either way",
	}, problems)
}

// TestSuppliedIsAChainNotAPlace: a CA is a chain's link (re-issued with the
// certificate before it) only when that certificate names it as issuer. A
// trust bundle's roots stand alone in any order: the function rewrites a
// bundle in its canonical order, and a render of its own output must see
// the same chains (FuzzProcess found a caBundle whose second root was
// taken for a chain's link after one render and not before).
func TestSuppliedIsAChainNotAPlace(t *testing.T) {
	tests := []struct {
		name  string
		value []string
		want  []bool
	}{
		{"leaf, intermediate, root", []string{"linkerd-proxy-short", "linkerd-issuer-short", "linkerd-anchor-new"}, []bool{false, true, true}},
		{"intermediate, root", []string{"linkerd-issuer-new", "linkerd-anchor-new"}, []bool{false, true}},
		{"two roots", []string{"ca-2025", "ca-2026"}, []bool{false, false}},
		{"two roots, the other order", []string{"ca-2026", "ca-2025"}, []bool{false, false}},
		{"a leaf, then a root that did not sign it", []string{"leaf-new", "ca-2025"}, []bool{false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := inventory.Scan(testitems.Items(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  ca.crt: {{b64 \""+strings.Join(tt.value, "\" \"")+"\"}}\n"))
			var got []bool
			for _, f := range inv.Certificates {
				got = append(got, f.Supplied)
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// TestScanMachineBootstrapConfig: KubeadmControlPlane records a
// control-plane machine's certificate expiry on its KubeadmConfig, and the
// Machine controller reads it there when the Machine has no annotation of
// its own; the status is that copy, and may lag or be absent from a dump.
func TestScanMachineBootstrapConfig(t *testing.T) {
	// machine is a Machine without a date of its own and the KubeadmConfig
	// its configRef names, with the annotation KCP writes.
	machine := func(version, name, configRef, status, date string) string {
		return "apiVersion: cluster.x-k8s.io/" + version + "\nkind: Machine\nmetadata: {name: " + name + ", namespace: default}\n" +
			"spec:\n  bootstrap:\n    configRef: " + configRef + "\n" + status +
			"---\napiVersion: bootstrap.cluster.x-k8s.io/" + version + "\nkind: KubeadmConfig\nmetadata:\n  name: " + name +
			"\n  namespace: default\n  annotations:\n    machine.cluster.x-k8s.io/certificates-expiry: " + date + "\n"
	}
	inv := inventory.Scan(testitems.Items(t, machine("v1beta2", "prod-cp-7x2k", "{apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfig, name: prod-cp-7x2k}",
		"status:\n  certificatesExpiryDate: \"2027-11-01T00:00:00Z\"\n", `"2026-12-01T00:00:00Z"`)+"---\n"+
		machine("v1beta1", "prod-cp-9q4m", "{apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, name: prod-cp-9q4m, namespace: default}", "", "soon")))
	require.Len(t, inv.Expiries, 1)
	e := inv.Expiries[0]
	require.Equal(t, "KubeadmConfig default/prod-cp-7x2k metadata.annotations[machine.cluster.x-k8s.io/certificates-expiry] certificates of machine prod-cp-7x2k",
		e.Ref.String()+" "+e.Field+" "+e.Subject, "the bootstrap config's date, not the status")
	require.Equal(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), e.At(now))
	require.Len(t, inv.Problems, 1)
	p := inv.Problems[0]
	require.Equal(t, "KubeadmConfig default/prod-cp-9q4m metadata.annotations[machine.cluster.x-k8s.io/certificates-expiry]", p.Ref.String()+" "+p.Field)
	require.True(t, p.Expiry, "a reported expiry, not certificate data")
}

// TestScanQuotesOnlyPlainNames: the Key of a result names a kubeconfig's
// clusters[] and users[] entry, and a data key, only when the name is
// plain (kube.Safe): a name that holds PEM text or a control character is
// written as its index, or described, so that a hostile manifest cannot
// put key material or terminal escapes into a report.
func TestScanQuotesOnlyPlainNames(t *testing.T) {
	keyPEM := string(testpki.Fixture("kube-admin").KeyPEM())
	pemName := strings.ReplaceAll(strings.TrimSpace(keyPEM), "\n", `\n`)
	keyName := base64.StdEncoding.EncodeToString([]byte(keyPEM))[:64] // a kubeconfig value that holds PEM text is read as PEM
	kubeconfig := func(cluster, user string) string {
		doc := "clusters:\n- name: \"" + cluster + "\"\n  cluster: {certificate-authority-data: " + testpki.B64("signer-b-1") + "}\n" +
			"users:\n- name: \"" + user + "\"\n  user: {client-certificate-data: " + testpki.B64("kube-admin") + "}\n"
		return base64.StdEncoding.EncodeToString([]byte(doc))
	}
	secret := func(data string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\n" + data
	}
	for _, tt := range []struct {
		name, in string
		want     []string
	}{
		{"plain kubeconfig names, an EKS ARN included", secret("data:\n  value: " + kubeconfig("arn:aws:eks:eu-west-1:123456789012:cluster/prod", "kubernetes-admin@prod") + "\n"),
			[]string{"data.value:clusters[arn:aws:eks:eu-west-1:123456789012:cluster/prod].cluster.certificate-authority-data", "data.value:users[kubernetes-admin@prod].user.client-certificate-data"}},
		{"key-material and control-character kubeconfig names", secret("data:\n  value: " + kubeconfig(keyName, `adm\x1b[31min`) + "\n"),
			[]string{"data.value:clusters[0].cluster.certificate-authority-data", "data.value:users[0].user.client-certificate-data"}},
		{"PEM-ish data key", secret("data:\n  \"" + pemName + "\": " + testpki.B64("signer-b-1") + "\n"),
			[]string{"data.<a string of " + fmt.Sprint(len(strings.TrimSpace(keyPEM))) + " bytes over 3 lines, PEM data>"}},
		{"control-character data key", secret("data:\n  \"ca\\a.crt\": " + testpki.B64("signer-b-1") + "\n"),
			[]string{"data.<a string of 7 bytes>"}},
		{"control-character key of a value that does not decode", secret("data:\n  \"ca\\e.crt\": '!!!'\n"),
			[]string{"problem data.<a string of 7 bytes>"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inv := inventory.Scan(testitems.Items(t, tt.in))
			var got []string
			for _, f := range inv.Certificates {
				got = append(got, f.Key())
			}
			for _, p := range inv.Problems {
				got = append(got, "problem "+p.Field)
			}
			require.Equal(t, tt.want, got)
			for _, r := range rotate.ExpiryResults(inv, now, 0) {
				for _, s := range []string{r.Message, r.Field.Path} {
					require.NotContains(t, s, "PRIVATE KEY")
					require.NotContains(t, s, keyName)
					require.NotContains(t, s, "\x1b")
					require.NotContains(t, s, "\a")
				}
			}
		})
	}
}

// TestScanDERValues: a Secret or ConfigMap value that is one DER
// certificate (a ConfigMap's binaryData, a Secret's ca.der) is read as
// that certificate, and its object is declared read; a DER value that is
// not a certificate (a private key, a truststore) is skipped like a PEM
// key, and so is DER with anything after it.
func TestScanDERValues(t *testing.T) {
	der := func(name string) string { return base64.StdEncoding.EncodeToString(testpki.Fixture(name).Cert.Raw) }
	keyBlock, _ := pem.Decode(testpki.Fixture("kube-admin").KeyPEM())
	in := testitems.Items(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: roots, namespace: a}
binaryData:
  ca.der: `+der("signer-a-1")+`
---
apiVersion: v1
kind: Secret
metadata: {name: tls, namespace: a}
data:
  ca.der: `+der("signer-b-1")+`
  tls.key.der: `+base64.StdEncoding.EncodeToString(keyBlock.Bytes)+`
  trailing.der: `+base64.StdEncoding.EncodeToString(append(testpki.Fixture("kube-admin").Cert.Raw, 0))+`
---
apiVersion: v1
kind: ConfigMap
metadata: {name: key-only, namespace: a}
binaryData:
  key.der: `+base64.StdEncoding.EncodeToString(keyBlock.Bytes)+`
`)
	inv := inventory.Scan(in)
	require.Equal(t, []string{"ConfigMap a/roots binaryData.ca.der signer-a-1", "Secret a/tls data.ca.der signer-b-1"}, found(inv))
	require.Empty(t, inv.Problems)
	var rule func(*yaml.RNode) bool
	for _, r := range inventory.Reads().Some {
		if r.Kind == "ConfigMap" {
			rule = r.Selects
		}
	}
	require.True(t, rule(in[0]), "a ConfigMap whose binaryData holds a DER certificate is read")
}
