package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/controlplane"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestWebhookTrustThroughTheRotation has the API server itself call an
// admission webhook over TLS, its caBundle being what the function
// injected into the webhook configuration:
//
//   - before the rotation (the bundle holds the old CA) a webhook serving a
//     leaf of the old CA is called;
//   - during it (the rendered bundle: new and old CA) webhooks serving a
//     leaf of the old CA and of the new CA are both called;
//   - after it (the webhook re-issued its leaf from the new CA, and the
//     old CA retired: the rendered package rendered again once
//     retain.for has passed) the bundle holds only the new CA: it admits
//     the new leaf and no longer the old one;
//   - with Copy mode (only the new CA) the webhook still serving its old
//     leaf is rejected by the API server's TLS client, and so is a webhook
//     that switched to the new CA while the bundle still held only the
//     old one: the overlap is what keeps admission working.
func TestWebhookTrustThroughTheRotation(t *testing.T) {
	cp := startControlPlane(t)
	oldCA, newCA := testpki.Fixture("example-ca-old"), testpki.Fixture("example-ca-new")
	oldServer := startWebhook(t, leafFor(t, oldCA))
	newServer := startWebhook(t, leafFor(t, newCA))

	dir := expandPackage(t, "webhook", "")
	beforeBundle := caBundleOf(t, clusterResources(t, dir))
	renderDir(t, dir)
	bundle := caBundleOf(t, clusterResources(t, dir))
	requireBundleOf(t, "during", bundle, newCA, oldCA)

	// After the overlap: the rendered package, rendered again two days
	// later with retain.for: 24h, drops the old CA.
	afterDir := t.TempDir()
	if err := os.CopyFS(afterDir, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	pinned := func(at time.Time) string { return fmt.Sprintf("  now: %q\n", at.Format(time.RFC3339)) }
	editPolicy(t, afterDir, pinned(e2eharness.StagedNow), pinned(e2eharness.StagedNow.Add(48*time.Hour)))
	editPolicy(t, afterDir, "    mode: Bundle", "    retain: {for: 24h}\n    mode: Bundle")
	renderDir(t, afterDir)
	afterBundle := caBundleOf(t, clusterResources(t, afterDir))
	requireBundleOf(t, "after", afterBundle, newCA)

	copyDir := expandPackage(t, "webhook", "")
	editPolicy(t, copyDir, "mode: Bundle", "mode: Copy")
	renderDir(t, copyDir)
	copyBundle := caBundleOf(t, clusterResources(t, copyDir))

	for _, step := range []struct {
		name     string
		caBundle []byte
		server   *webhookServer
		admitted bool
	}{
		{"before-old-leaf", beforeBundle, oldServer, true},
		{"during-old-leaf", bundle, oldServer, true},
		{"during-new-leaf", bundle, newServer, true},
		{"after-new-leaf", afterBundle, newServer, true},
		{"after-old-leaf", afterBundle, oldServer, false},
		{"copy-mode-old-leaf", copyBundle, oldServer, false},
		{"before-bundle-new-leaf", beforeBundle, newServer, false},
	} {
		t.Run(step.name, func(t *testing.T) {
			registerWebhook(t, cp, step.name, step.server, step.caBundle)
			requireAdmission(t, cp, step.name, step.server, step.admitted)
		})
	}
}

// editPolicy replaces the first old in dir's rotation-policy.yaml with
// new; the policy must hold old.
func editPolicy(t *testing.T, dir, old, new string) {
	t.Helper()
	path := filepath.Join(dir, "rotation-policy.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s has no %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// requireBundleOf fails unless the PEM bundle holds exactly the
// certificates of cas, in that order.
func requireBundleOf(t *testing.T, step string, bundle []byte, cas ...testpki.Cert) {
	t.Helper()
	var got, want []string
	for rest := bundle; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("%s: the caBundle holds a block that is not a certificate: %v", step, err)
		}
		got = append(got, c.Subject.CommonName)
	}
	for _, ca := range cas {
		want = append(want, ca.Cert.Subject.CommonName)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s: the caBundle holds %v, want %v", step, got, want)
	}
}

// caBundleOf returns the PEM the function injected into the package's
// ValidatingWebhookConfiguration: its webhooks[0].clientConfig.caBundle,
// base64 as the API server reads it. Each step registers a configuration
// of its own with that caBundle, pointing at the step's server.
func caBundleOf(t *testing.T, stream string) []byte {
	t.Helper()
	for _, it := range parseStream(t, stream) {
		if nodeKey(it) != "ValidatingWebhookConfiguration rotate-certs-probe" {
			continue
		}
		field, err := it.Pipe(yaml.Lookup("webhooks", "[name=probe.rotate-certs.test]", "clientConfig", "caBundle"))
		if err != nil || field == nil {
			t.Fatalf("rotate-certs-probe has no webhooks[0].clientConfig.caBundle: %v", err)
		}
		pemBytes, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(field.YNode().Value), ""))
		if err != nil || !strings.Contains(string(pemBytes), "BEGIN CERTIFICATE") {
			t.Fatalf("rotate-certs-probe's caBundle is not a base64 PEM bundle: %v", err)
		}
		return pemBytes
	}
	t.Fatal("no ValidatingWebhookConfiguration rotate-certs-probe in the package")
	return nil
}

// leafFor issues a TLS serving certificate for 127.0.0.1 from ca.
func leafFor(t *testing.T, ca testpki.Cert) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "webhook of " + ca.Cert.Subject.CommonName},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// webhookServer is a validating admission webhook on 127.0.0.1 that
// allows everything and counts the reviews it answered, by URL path.
type webhookServer struct {
	*httptest.Server
	mu     sync.Mutex
	called map[string]int
}

func startWebhook(t *testing.T, cert tls.Certificate) *webhookServer {
	t.Helper()
	w := &webhookServer{called: map[string]int{}}
	w.Server = httptest.NewUnstartedServer(http.HandlerFunc(w.review))
	w.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	// Every call is a new TLS handshake: a kept-alive connection from an
	// earlier step would skip the verification this test is about.
	w.Config.SetKeepAlivesEnabled(false)
	// The rejected handshakes are expected; they are not log noise.
	w.Config.ErrorLog = log.New(io.Discard, "", 0)
	w.StartTLS()
	t.Cleanup(w.Close)
	return w
}

func (w *webhookServer) review(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var review struct {
		Request struct {
			UID string `json:"uid"`
		} `json:"request"`
	}
	if err != nil || json.Unmarshal(body, &review) != nil || review.Request.UID == "" {
		http.Error(rw, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	w.called[r.URL.Path]++
	w.mu.Unlock()
	rw.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(rw, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":%q,"allowed":true}}`, review.Request.UID)
}

func (w *webhookServer) calls(path string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.called[path]
}

// registerWebhook creates a ValidatingWebhookConfiguration for step:
// ConfigMap creations labelled probe=<step> go to <server>/validate/<step>,
// verified with caBundle, and fail when the call fails.
func registerWebhook(t *testing.T, cp *controlplane.ControlPlane, step string, server *webhookServer, caBundle []byte) {
	t.Helper()
	cfg := map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       "ValidatingWebhookConfiguration",
		"metadata":   map[string]any{"name": "rotate-certs-" + step},
		"webhooks": []any{map[string]any{
			"name": step + ".rotate-certs.test",
			"clientConfig": map[string]any{
				"url":      server.URL + "/validate/" + step,
				"caBundle": base64.StdEncoding.EncodeToString(caBundle),
			},
			"rules": []any{map[string]any{
				"operations": []string{"CREATE"}, "apiGroups": []string{""}, "apiVersions": []string{"v1"}, "resources": []string{"configmaps"},
			}},
			"objectSelector":          map[string]any{"matchLabels": map[string]string{"probe": step}},
			"sideEffects":             "None",
			"admissionReviewVersions": []string{"v1"},
			"failurePolicy":           "Fail",
			"timeoutSeconds":          10,
		}},
	}
	doc, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, cp, string(doc), "apply", "--server-side", "--field-manager="+fieldManager, "-f", "-")
}

// requireAdmission creates (dry run) a ConfigMap labelled probe=<step> until
// the API server has loaded the step's webhook: then the creation either
// succeeded after calling the webhook (admitted) or failed on the TLS
// verification of the call (rejected), and that must be what is wanted. A
// creation that succeeds without a call means the configuration is not
// active yet.
func requireAdmission(t *testing.T, cp *controlplane.ControlPlane, step string, server *webhookServer, admitted bool) {
	t.Helper()
	path := "/validate/" + step
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"probe-","namespace":"default","labels":{"probe":%q}}}`, step)
	poll(t, "admission of step "+step, func() error {
		before := server.calls(path)
		code, resp, err := cp.Do(ctx(t), http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=All", "application/json", []byte(body))
		if err != nil {
			return err
		}
		called := server.calls(path) > before
		switch {
		case code == http.StatusCreated && called:
			if !admitted {
				return fmt.Errorf("the API server called the webhook and admitted the object, but its caBundle should not trust the webhook's certificate")
			}
			return nil
		case code == http.StatusCreated:
			return fmt.Errorf("%w: webhook configuration not active", errNotYet)
		case strings.Contains(string(resp), "failed calling webhook") && strings.Contains(string(resp), "x509: certificate signed by unknown authority"):
			if admitted {
				return fmt.Errorf("the API server's TLS client rejected the webhook, but its caBundle should trust it: %s", resp)
			}
			return nil
		default:
			return fmt.Errorf("unexpected answer %d: %s", code, resp)
		}
	})
}
