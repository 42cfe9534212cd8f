package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// End-to-end tests of examples/webhooks: Envoy Gateway's topology injector,
// whose caBundle rotate-certs writes.

const (
	webhookConfig = "envoy-gateway-topology-injector.envoy-gateway-system"
	// webhookHost is the name the API server dials for the webhook's
	// service (envoy-gateway in envoy-gateway-system).
	webhookHost = "envoy-gateway.envoy-gateway-system.svc"
)

// caBundleOf returns the certificates of the first webhook's caBundle of
// the MutatingWebhookConfiguration in items.
func caBundleOf(t *testing.T, items []*yaml.RNode) []*x509.Certificate {
	t.Helper()
	for _, it := range items {
		if it.GetKind() != "MutatingWebhookConfiguration" || it.GetName() != webhookConfig {
			continue
		}
		v, err := it.Pipe(yaml.Lookup("webhooks", "0", "clientConfig", "caBundle"))
		require.NoError(t, err)
		require.NotNil(t, v, "no caBundle")
		b, err := base64.StdEncoding.DecodeString(v.YNode().Value)
		require.NoError(t, err)
		d, err := pki.DecodePEM(b)
		require.NoError(t, err)
		return d.Certificates
	}
	t.Fatalf("MutatingWebhookConfiguration %s not found", webhookConfig)
	return nil
}

func commonNames(certs []*x509.Certificate) []string {
	var out []string
	for _, c := range certs {
		out = append(out, c.Subject.CommonName)
	}
	return out
}

var webhookWant = []string{"example-ca-new", "example-ca-old"}

func TestWebhooksExampleKustomize(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	dir := stageExample(t, "webhooks")
	out, _ := kustomizeBuild(t, kustomize, dir)
	require.Equal(t, webhookWant, commonNames(caBundleOf(t, parseStream(t, out))))
}

func TestWebhooksExampleKpt(t *testing.T) {
	kpt := e2eharness.Tool(t, "kpt")
	dir := stageExample(t, "webhooks")
	kptRender(t, kpt, dir)
	require.Equal(t, webhookWant, commonNames(caBundleOf(t, readPackage(t, dir))))
	changed, _, err := run(t, dir, "git", "diff", "--name-only")
	require.NoError(t, err)
	require.Equal(t, "topology-injector.yaml\n", changed, "only the webhook configuration changes")
	requireRenderStable(t, kpt, dir, "webhooks")
}

// servingCert is the webhook server's certificate for webhookHost, issued
// by ca (certgen issues one like it for envoy-gateway).
func servingCert(t *testing.T, ca testpki.Cert) tls.Certificate {
	t.Helper()
	key := testpki.KeyFor("serving " + ca.Cert.Subject.CommonName)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: webhookHost},
		DNSNames:     []string{webhookHost},
		NotBefore:    ca.Cert.NotBefore,
		NotAfter:     ca.Cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// admissionServer is a webhook server presenting cert: it admits every
// AdmissionReview posted to the topology injector's path.
func admissionServer(t *testing.T, cert tls.Certificate) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/inject-pod-topology", func(w http.ResponseWriter, r *http.Request) {
		var review struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Request    struct {
				UID string `json:"uid"`
			} `json:"request"`
		}
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"apiVersion": review.APIVersion, "kind": review.Kind,
			"response": map[string]any{"uid": review.Request.UID, "allowed": true},
		})
	})
	s := httptest.NewUnstartedServer(mux)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	// The handshake the test expects to fail is logged by the server.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// admissionCall makes the call the API server makes: TLS to the webhook
// server, verified against caBundle for webhookHost, an AdmissionReview
// POSTed to the webhook's path. It returns nil when the review is allowed.
func admissionCall(t *testing.T, server *httptest.Server, caBundle []*x509.Certificate) error {
	t.Helper()
	pool := x509.NewCertPool()
	for _, c := range caBundle {
		pool.AddCert(c)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: webhookHost}}}
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"b7f0c4","operation":"CREATE","resource":{"group":"","version":"v1","resource":"pods"},"subResource":"binding"}}`
	resp, err := client.Post(server.URL+"/inject-pod-topology", "application/json", bytes.NewBufferString(review))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out struct {
		Response struct {
			UID     string `json:"uid"`
			Allowed bool   `json:"allowed"`
		} `json:"response"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "b7f0c4", out.Response.UID)
	require.True(t, out.Response.Allowed)
	return nil
}

// TestWebhookRotationWithoutAFailedAdmissionCall walks examples/webhooks
// through a CA rotation. Two things change in the cluster independently and
// in any order: GitOps applies the rendered caBundle, and the webhook server
// picks up its new serving certificate. An admission call is made for
// every pair of (caBundle the API server may hold, certificate the server
// may present) at each step, and none fails. Without the pre-distributed
// next CA, the call after certgen's rotation would fail - the test checks
// that too, so that it can tell.
func TestWebhookRotationWithoutAFailedAdmissionCall(t *testing.T) {
	oldCA, newCA := testpki.Fixture("example-ca-old"), testpki.Fixture("example-ca-new")
	oldServer, newServer := admissionServer(t, servingCert(t, oldCA)), admissionServer(t, servingCert(t, newCA))
	dir := stageExample(t, "webhooks")
	render := func() []*x509.Certificate {
		t.Helper()
		_, stderr, err := run(t, dir, binary, "render", ".", "--policy", "rotation-policy.yaml")
		require.NoError(t, err, stderr)
		return caBundleOf(t, readPackage(t, dir))
	}
	calls := 0
	mustAdmit := func(step string, bundles [][]*x509.Certificate, servers ...*httptest.Server) {
		t.Helper()
		for _, b := range bundles {
			for _, s := range servers {
				calls++
				require.NoError(t, admissionCall(t, s, b), "%s: caBundle %v", step, commonNames(b))
			}
		}
	}

	// As committed: the caBundle trusts the old CA, which signs the
	// serving certificate; the next CA waits in webhook-next-ca.
	applied := caBundleOf(t, readPackage(t, dir))
	require.Equal(t, []string{"example-ca-old"}, commonNames(applied))
	mustAdmit("before", [][]*x509.Certificate{applied}, oldServer)

	// 1. Render: the next CA joins the caBundle before it signs anything.
	predistributed := render()
	require.Equal(t, webhookWant, commonNames(predistributed))
	mustAdmit("next CA rendered", [][]*x509.Certificate{applied, predistributed}, oldServer)

	// 2. certgen rotates: the Secret holds the new CA and a new serving
	// certificate, and the next-CA slot is emptied. Until the next render
	// is applied the API server holds the pre-distributed bundle, while
	// the server presents either certificate.
	writeRotatedSecret(t, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "next-ca.yaml"), []byte(
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: webhook-next-ca\n  namespace: envoy-gateway-system\ndata:\n  ca.crt: \"\"\n"), 0o644))
	mustAdmit("certgen rotated", [][]*x509.Certificate{predistributed}, oldServer, newServer)

	// 3. Render: the old CA is now a previous one and stays for the
	// overlap; the set is the same, so the caBundle bytes do not change.
	before := readFile(t, filepath.Join(dir, "topology-injector.yaml"))
	rotated := render()
	require.Equal(t, webhookWant, commonNames(rotated))
	after := readFile(t, filepath.Join(dir, "topology-injector.yaml"))
	require.Equal(t, caBundleLine(before), caBundleLine(after), "the same set of CAs must keep the caBundle's bytes")
	mustAdmit("rotation rendered", [][]*x509.Certificate{predistributed, rotated}, oldServer, newServer)
	require.Equal(t, 9, calls)

	// Without pre-distribution, the API server would still hold the old
	// CA alone when the server switched: that call fails.
	require.Error(t, admissionCall(t, newServer, applied), "the test must be able to see a failed admission call")
}

// writeRotatedSecret replaces the envoy-gateway Secret as certgen does on
// a rotation: the new CA, and a serving certificate and key it issued.
func writeRotatedSecret(t *testing.T, dir string) {
	t.Helper()
	leaf := testpki.Fixture("example-leaf-new")
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	secret := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: envoy-gateway\n  namespace: envoy-gateway-system\ntype: kubernetes.io/tls\ndata:\n" +
		"  ca.crt: " + b64(testpki.Fixture("example-ca-new").PEM()) + "\n" +
		"  tls.crt: " + b64(leaf.PEM()) + "\n" +
		"  tls.key: " + b64(leaf.KeyPEM()) + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "envoy-gateway-ca.yaml"), []byte(secret), 0o644))
}

// caBundleLine returns the caBundle line of a file.
func caBundleLine(s string) string {
	for _, line := range bytes.Split([]byte(s), []byte("\n")) {
		if bytes.Contains(line, []byte("caBundle:")) {
			return string(line)
		}
	}
	return ""
}

// TestCheckListsTrustOutsideSecrets: check, its JSON and its SVG timeline
// list the certificates of a webhook's caBundle, of a rendered trust-manager
// Bundle's inLine source and of a snapshot.
func TestCheckListsTrustOutsideSecrets(t *testing.T) {
	dir := stageExample(t, "trust-manager")
	_, stderr, err := run(t, dir, binary, "render", ".", "--policy", "rotation-policy.yaml")
	require.NoError(t, err, stderr)
	out, stderr, err := run(t, ".", binary, "check", filepath.Join(examplesDir, "webhooks"), dir, "-o", "json", "--now", "2026-11-22")
	require.NoError(t, err, stderr)
	var report struct {
		Entries []struct {
			Resource struct{ Kind, Name string }
			Key      string
			Subject  string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &report))
	found := map[string]bool{}
	for _, e := range report.Entries {
		found[e.Resource.Kind+" "+e.Key+" "+e.Subject] = true
	}
	for _, want := range []string{
		"MutatingWebhookConfiguration webhooks[name=topology.webhook.gateway.envoyproxy.io].clientConfig.caBundle CN=example-ca-old,O=rotate-certs test",
		"Bundle spec.sources[2].inLine CN=example-ca-old,O=rotate-certs test",
		"Secret data.ca.crt CN=example-ca-new,O=rotate-certs test",
	} {
		require.True(t, found[want], "check must list %q; it listed %v", want, found)
	}
	svg, stderr, err := run(t, ".", binary, "check", filepath.Join(examplesDir, "webhooks"), "-o", "svg", "--now", "2026-11-22")
	require.NoError(t, err, stderr)
	require.Contains(t, svg, "MutatingWebhookConfiguration envoy-gateway-topology-injector")
}
