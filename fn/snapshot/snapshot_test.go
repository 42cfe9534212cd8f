package snapshot_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/snapshot"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

var (
	ca   = testpki.Fixture("ca-2026")
	leaf = testpki.Fixture("leaf-new")
)

// kubectlSecret is a Secret as `kubectl get -o yaml` prints it: keys in
// alphabetical order, server-set metadata, the last-applied annotation.
func kubectlSecret(indent string) string {
	s := `apiVersion: v1
data:
  ca.crt: ` + b64(string(ca.PEM())) + `
  tls.crt: ` + b64(string(leaf.PEM())) + `
  tls.key: ` + b64(string(leaf.KeyPEM())) + `
kind: Secret
metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"v1","data":{"tls.key":"` + b64(string(leaf.KeyPEM())) + `"},"kind":"Secret"}
    cert-manager.io/certificate-name: envoy-gateway
    cert-manager.io/issuer-kind: Issuer
    owner.example.com/team: edge
  creationTimestamp: "2026-06-01T09:14:07Z"
  labels:
    app.kubernetes.io/managed-by: certgen
  name: envoy-gateway
  namespace: envoy-gateway-system
  ownerReferences:
  - apiVersion: batch/v1
    kind: Job
    name: certgen
    uid: 2b0f7e4c-3f0e-4bde-9a55-0d6f6c0f9e11
  resourceVersion: "48213"
  uid: 0e9c2f4e-8a1d-4c52-a3d4-61f0d7c1b8a2
type: kubernetes.io/tls
`
	return indent + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+indent) + "\n"
}

func take(t *testing.T, input string) (snapshot.Result, string, error) {
	t.Helper()
	set := resio.ReadPaths([]string{"-"}, strings.NewReader(input))
	require.Empty(t, set.Problems)
	res, err := snapshot.Take(set.Items)
	if err != nil {
		return res, "", err
	}
	out, err := snapshot.Encode(res.Objects)
	require.NoError(t, err)
	return res, string(out), nil
}

// requireFixedPoint: a snapshot of a snapshot is the same snapshot.
func requireFixedPoint(t *testing.T, out string) {
	t.Helper()
	_, again, err := take(t, out)
	require.NoError(t, err)
	require.Equal(t, out, again)
}

func TestSnapshotOfKubectlOutput(t *testing.T) {
	res, out, err := take(t, kubectlSecret(""))
	require.NoError(t, err)
	want := `# Snapshot of an object that lives in the cluster (rotate-certs snapshot): its
# certificates only, read by rotate-certs as a bundle source and never applied
# (local-config). Take it again when the live object changes.
apiVersion: v1
kind: Secret
metadata:
  name: envoy-gateway
  namespace: envoy-gateway-system
  labels:
    app.kubernetes.io/managed-by: certgen
  annotations:
    cert-manager.io/certificate-name: envoy-gateway
    cert-manager.io/issuer-kind: Issuer
    config.kubernetes.io/local-config: "true"
type: kubernetes.io/tls
data:
  ca.crt: ` + b64(string(ca.PEM())) + `
  tls.crt: ` + b64(string(leaf.PEM())) + `
`
	require.Equal(t, want, out)
	require.Equal(t, []string{
		"Secret envoy-gateway-system/envoy-gateway: dropped metadata.creationTimestamp, metadata.ownerReferences, metadata.resourceVersion, metadata.uid: a snapshot keeps only apiVersion, kind, name, namespace, labels, the annotations it knows, a Secret's type and the certificate values",
		"Secret envoy-gateway-system/envoy-gateway: dropped annotation kubectl.kubernetes.io/last-applied-configuration: a copy of the object as applied, keys included",
		"Secret envoy-gateway-system/envoy-gateway: dropped annotation(s) owner.example.com/team: a snapshot keeps only the annotations it knows to be safe (cert-manager's on the Secrets it issues)",
		"Secret envoy-gateway-system/envoy-gateway: dropped data.tls.key: a private key, which a snapshot never copies",
	}, res.Notes)

	requireFixedPoint(t, out)
}

func TestSnapshotOfAList(t *testing.T) {
	list := "apiVersion: v1\nitems:\n- " + kubectlSecret("  ")[2:] + `- apiVersion: v1
  data:
    ca-bundle.crt: |
` + "      " + strings.ReplaceAll(strings.TrimSuffix(string(ca.PEM())+string(leaf.KeyPEM()), "\n"), "\n", "\n      ") + `
    config.yaml: "mode: strict"
  kind: ConfigMap
  metadata:
    name: roots
    namespace: trust
    resourceVersion: "77"
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: trust}
- apiVersion: v1
  data:
    password: ` + b64("hunter2") + `
  kind: Secret
  metadata: {name: creds, namespace: trust}
kind: List
metadata:
  resourceVersion: ""
`
	res, out, err := take(t, list)
	require.NoError(t, err)
	require.Len(t, res.Objects, 2, "the Secret and the ConfigMap; the Deployment and the certificate-less Secret are not written")
	require.Contains(t, out, "  ca-bundle.crt: |\n    -----BEGIN CERTIFICATE-----\n")
	require.NotContains(t, out, "config.yaml")
	require.NotContains(t, out, "creds")
	require.Contains(t, res.Notes, "ConfigMap trust/roots: kept only the certificates of data.ca-bundle.crt: dropped private key")
	require.Contains(t, res.Notes, "ConfigMap trust/roots: dropped data.config.yaml: it holds no PEM certificate")
	require.Contains(t, res.Notes, "skipped apps/v1 Deployment trust/web: a snapshot holds core v1 Secrets and ConfigMaps only")
	require.Contains(t, res.Notes, "Secret trust/creds: not written: it holds no certificate")
}

// TestSnapshotCopiesNoKey: no private key of the input, as PEM, base64 or
// hex, reaches the output or a note.
func TestSnapshotCopiesNoKey(t *testing.T) {
	withKeyAnnotation := strings.Replace(kubectlSecret(""), "    owner.example.com/team: edge\n",
		"    owner.example.com/team: edge\n    debug.example.com/key: "+b64(string(leaf.KeyPEM()))+"\n", 1)
	res, out, err := take(t, withKeyAnnotation)
	require.NoError(t, err)
	block, _ := pem.Decode(leaf.KeyPEM())
	written := out + strings.Join(res.Notes, "\n")
	for _, needle := range []string{"PRIVATE KEY-----", base64.StdEncoding.EncodeToString(block.Bytes), hex.EncodeToString(block.Bytes), b64(string(leaf.KeyPEM()))} {
		require.NotContains(t, written, needle)
	}
	require.NotContains(t, out, "debug.example.com/key", "an annotation that holds a base64-encoded key is dropped")
	require.Contains(t, res.Notes, "Secret envoy-gateway-system/envoy-gateway: dropped annotation debug.example.com/key: it holds a private key")
}

// TestSnapshotByAllowlist: a field the allowlist does not name is dropped
// and named in a note, whatever it holds: a private key in a Secret's
// type (written as Opaque, never echoed), a key in an unknown top-level
// field or in a metadata field, immutable, status.
func TestSnapshotByAllowlist(t *testing.T) {
	key := string(leaf.KeyPEM())
	input := `apiVersion: v1
kind: Secret
metadata:
  name: root
  namespace: trust
  generateName: ` + b64(key) + `
  labels:
    app: root
    blob: ` + b64(key)[:60] + `
type: |
  ` + strings.ReplaceAll(strings.TrimSpace(key), "\n", "\n  ") + `
immutable: true
spec:
  note: ` + b64(key) + `
status: {phase: Active}
data:
  ca.crt: ` + b64(string(ca.PEM())) + `
`
	res, out, err := take(t, input)
	require.NoError(t, err)
	written := out + strings.Join(res.Notes, "\n")
	block, _ := pem.Decode(leaf.KeyPEM())
	for _, needle := range []string{"PRIVATE KEY", base64.StdEncoding.EncodeToString(block.Bytes)[:40], b64(key)[:40]} {
		require.NotContains(t, written, needle)
	}
	require.Contains(t, out, "type: Opaque\n")
	for _, field := range []string{"immutable", "spec", "status", "generateName", "blob"} {
		require.NotContains(t, out, field)
	}
	require.Contains(t, out, "app: root")
	require.Equal(t, []string{
		"Secret trust/root: dropped immutable, metadata.generateName, spec, status: a snapshot keeps only apiVersion, kind, name, namespace, labels, the annotations it knows, a Secret's type and the certificate values",
		"Secret trust/root: dropped label blob: not a label the API server accepts",
		`Secret trust/root: wrote type Opaque: type a string of ` + fmt.Sprint(len(strings.TrimSpace(key))+1) + ` bytes over 3 lines, PEM data is not a Secret type of the Kubernetes API`,
	}, res.Notes)

	// A type of another kind of tool is named, and written as Opaque.
	res, out, err = take(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: r, namespace: n}\ntype: helm.sh/release.v1\ndata: {ca.crt: "+b64(string(ca.PEM()))+"}\n")
	require.NoError(t, err)
	require.Contains(t, out, "type: Opaque\n")
	require.Equal(t, []string{`Secret n/r: wrote type Opaque: type "helm.sh/release.v1" is not a Secret type of the Kubernetes API`}, res.Notes)
}

func TestSnapshotBadInput(t *testing.T) {
	for _, tt := range []struct{ name, input, want string }{
		{"not base64", "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\ndata: {ca.crt: '!!!'}\n",
			"Secret n/s data.ca.crt is not base64"},
		{"no name", "apiVersion: v1\nkind: Secret\nmetadata: {namespace: n}\ndata: {ca.crt: " + b64(string(ca.PEM())) + "}\n",
			"a Secret without metadata.name"},
		{"no certificate anywhere", "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\ndata: {tls.key: " + b64(string(leaf.KeyPEM())) + "}\n",
			"no Secret or ConfigMap in the input holds a certificate"},
		{"data is a list", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\ndata: [a]\n",
			"ConfigMap n/c data is a YAML list, not a map"},
		{"a key as the name", "apiVersion: v1\nkind: Secret\nmetadata: {name: " + strconv.Quote(string(leaf.KeyPEM())) + ", namespace: n}\ndata: {ca.crt: " + b64(string(ca.PEM())) + "}\n",
			"Secret n/<a string of 119 bytes over 3 lines, PEM data> metadata.name is not a name the API server accepts"},
		{"a key as the namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: " + b64(string(leaf.KeyPEM())) + "}\ndata: {ca.crt: " + strconv.Quote(string(ca.PEM())) + "}\n",
			"metadata.namespace is not a namespace the API server accepts"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := take(t, tt.input)
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
			require.NotContains(t, err.Error(), "PRIVATE KEY")
		})
	}
}

// TestSnapshotKeepsOnlyParsedCertificates: a block labelled CERTIFICATE
// whose bytes are not a certificate (a DER private key armoured as one,
// bytes that are no DER at all) is dropped and named by its place, never
// quoted; the certificates beside it are kept.
func TestSnapshotKeepsOnlyParsedCertificates(t *testing.T) {
	key, _ := pem.Decode(leaf.KeyPEM())
	fakeCert := func(der []byte) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	}
	input := "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\ndata:\n" +
		"  ca.crt: " + b64(string(ca.PEM())+fakeCert(key.Bytes)) + "\n" +
		"  armoured.crt: " + b64(fakeCert(key.Bytes)) + "\n" +
		"  junk.crt: " + b64(fakeCert([]byte("not DER at all"))+string(leaf.PEM())) + "\n"
	res, out, err := take(t, input)
	require.NoError(t, err)
	written := out + strings.Join(res.Notes, "\n")
	for _, needle := range []string{base64.StdEncoding.EncodeToString(key.Bytes)[:40], b64(fakeCert(key.Bytes))[:40], "not DER"} {
		require.NotContains(t, written, needle)
	}
	require.Contains(t, out, "  ca.crt: "+b64(string(ca.PEM()))+"\n")
	require.Contains(t, out, "  junk.crt: "+b64(string(leaf.PEM()))+"\n")
	require.NotContains(t, out, "armoured.crt")
	require.Equal(t, []string{
		"Secret n/s: dropped data.armoured.crt: CERTIFICATE block 1, a private key, which a snapshot never copies",
		"Secret n/s: kept only the certificates of data.ca.crt: dropped CERTIFICATE block 2, a private key, which a snapshot never copies",
		"Secret n/s: kept only the certificates of data.junk.crt: dropped CERTIFICATE block 1, which is not an X.509 certificate",
	}, res.Notes)
}

// TestSnapshotKeysAreDataKeys: a value is copied only under a key the API
// server accepts (letters, digits, '-', '_', '.'); a key that holds PEM
// text or a control character is dropped with its value, and the note
// describes it rather than repeating it.
func TestSnapshotKeysAreDataKeys(t *testing.T) {
	pemKey := strings.ReplaceAll(strings.TrimSpace(string(leaf.KeyPEM())), "\n", `\n`)
	input := "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\ndata:\n" +
		"  \"" + pemKey + "\": " + b64(string(ca.PEM())) + "\n" +
		"  \"ca\\e.crt\": " + b64(string(ca.PEM())) + "\n" +
		"  ca.crt: " + b64(string(ca.PEM())) + "\n"
	res, out, err := take(t, input)
	require.NoError(t, err)
	written := out + strings.Join(res.Notes, "\n")
	require.NotContains(t, written, "PRIVATE KEY")
	require.NotContains(t, written, "\x1b")
	require.Contains(t, out, "data:\n  ca.crt: "+b64(string(ca.PEM()))+"\n")
	require.Equal(t, []string{
		"Secret n/s: dropped data.<a string of " + fmt.Sprint(len(strings.TrimSpace(string(leaf.KeyPEM())))) + " bytes over 3 lines, PEM data>: not a data key the API server accepts",
		"Secret n/s: dropped data.<a string of 7 bytes>: not a data key the API server accepts",
	}, res.Notes)
}

// TestSnapshotOfDERValues: a value that is one DER certificate (a
// ConfigMap's binaryData, a Secret's ca.der) is kept, written as PEM from
// the parsed certificate and named in a note; a DER private key is
// dropped as a private key, and DER that is no certificate as no
// certificate.
func TestSnapshotOfDERValues(t *testing.T) {
	der := base64.StdEncoding.EncodeToString(ca.Cert.Raw)
	key, _ := pem.Decode(leaf.KeyPEM())
	input := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: roots, namespace: n}\nbinaryData:\n  ca.der: " + der + "\n" +
		"  key.der: " + base64.StdEncoding.EncodeToString(key.Bytes) + "\n" +
		"  blob.bin: " + base64.StdEncoding.EncodeToString(append(append([]byte{}, ca.Cert.Raw...), 0)) + "\n"
	res, out, err := take(t, input)
	require.NoError(t, err)
	require.Contains(t, out, "binaryData:\n  ca.der: "+b64(string(ca.PEM()))+"\n")
	require.NotContains(t, out, "key.der")
	require.NotContains(t, out+strings.Join(res.Notes, "\n"), base64.StdEncoding.EncodeToString(key.Bytes)[:40])
	require.Equal(t, []string{
		"ConfigMap n/roots: dropped binaryData.blob.bin: it holds no PEM certificate",
		"ConfigMap n/roots: wrote binaryData.ca.der as PEM: it holds one DER certificate, and a trust bundle reads its sources as PEM",
		"ConfigMap n/roots: dropped binaryData.key.der: a private key, which a snapshot never copies",
	}, res.Notes)

	requireFixedPoint(t, out)
}
