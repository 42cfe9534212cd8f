package rotate_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// rotationInput is a ResourceList in which the gateway CA source holds
// sourceCA and the trust Secret holds previous; extra leaves are present
// as tls Secrets.
func rotationInput(sourceCA string, previous []string, leaves ...string) []byte {
	b64 := func(names ...string) string {
		var pem []byte
		for _, n := range names {
			pem = append(pem, testpki.Fixture(n).PEM()...)
		}
		return base64.StdEncoding.EncodeToString(pem)
	}
	s := fmt.Sprintf(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    now: %q
    trustBundles:
    - name: gateway
      sources:
      - secret: {name: ca, namespace: gw}
      target: {name: trust}
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: ca, namespace: gw}
  data: {ca.crt: %s}
`, testpki.GoldenNow.Format(time.RFC3339), b64(sourceCA))
	if len(previous) > 0 {
		s += fmt.Sprintf(`- apiVersion: v1
  kind: Secret
  metadata: {name: trust, namespace: gw}
  data: {ca.crt: %s}
`, b64(previous...))
	}
	for _, l := range leaves {
		s += fmt.Sprintf(`- apiVersion: v1
  kind: Secret
  metadata: {name: %s, namespace: apps}
  type: kubernetes.io/tls
  data: {tls.crt: %s}
`, l, b64(l))
	}
	return []byte(s)
}

// renderedBundle runs the function and returns the trust Secret's PEM.
func renderedBundle(t *testing.T, input []byte) []byte {
	t.Helper()
	out, err := execute(t, input)
	require.NoError(t, err, string(out))
	for _, it := range parseResourceList(t, out).items {
		if kube.KeyOf(it) == (kube.Key{Kind: "Secret", Namespace: "gw", Name: "trust"}) {
			v, found, err := kube.Lookup(it, "ca.crt")
			require.NoError(t, err)
			require.True(t, found)
			return v.Bytes
		}
	}
	t.Fatal("no trust Secret in the output")
	return nil
}

// handshake runs a real mTLS handshake on loopback: the server requires a
// client certificate that verifies against clientCAs; the client presents
// client. It returns the server's verdict.
func handshake(t *testing.T, clientCAs []byte, client testpki.Cert) error {
	t.Helper()
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(clientCAs))
	at := func() time.Time { return testpki.GoldenNow }
	serverCert := testpki.NewLeaf("gateway.test", testpki.Fixture("ca-2026"), testpki.Date(2026, 11, 1), testpki.Days(90))
	serverRoots := x509.NewCertPool()
	serverRoots.AddCert(testpki.Fixture("ca-2026").Cert)

	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{serverCert.TLS()},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		Time:         at,
		MinVersion:   tls.VersionTLS13,
	})
	require.NoError(t, err)
	defer ln.Close()
	verdict := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			verdict <- err
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		err = conn.(*tls.Conn).Handshake()
		if err == nil {
			_, err = conn.Write([]byte("ok"))
		}
		verdict <- err
	}()
	clientCert := client.TLS()
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{
		// Present the certificate whatever CAs the server names, as a
		// client with one configured certificate does: crypto/tls's
		// Certificates field withholds one no listed CA issued, and the
		// server then refuses "no certificate", never judging the bundle.
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &clientCert, nil
		},
		RootCAs:    serverRoots,
		ServerName: "gateway.test",
		Time:       at,
		MinVersion: tls.VersionTLS13,
	})
	if err == nil {
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.ReadAll(conn) // TLS 1.3 reports a rejected client cert on read
		conn.Close()
	}
	return <-verdict
}

func TestTLSHandshakeAcrossRotation(t *testing.T) {
	oldLeaf, newLeaf := testpki.Fixture("leaf-old"), testpki.Fixture("leaf-new")

	// CA1 -> CA2: during the overlap both leaves are accepted.
	overlap := renderedBundle(t, rotationInput("ca-2026", []string{"ca-2025"}, "leaf-old", "leaf-new"))
	require.NoError(t, handshake(t, overlap, oldLeaf), "a leaf of the previous CA must be accepted during the overlap")
	require.NoError(t, handshake(t, overlap, newLeaf), "a leaf of the new CA must be accepted")

	// The same rotation in Copy mode would have broken the old leaf: this
	// is the failure the bundle prevents, and the test can see it.
	requireUnknownAuthority(t, handshake(t, testpki.Fixture("ca-2026").PEM(), oldLeaf), "Copy mode must refuse the old leaf")

	// CA2 -> CA3 with no leaf of CA1 left: CA1 is retired and its leaf is
	// refused.
	retired := renderedBundle(t, rotationInput("ca-2027", []string{"ca-2026", "ca-2025"}, "leaf-new"))
	requireUnknownAuthority(t, handshake(t, retired, oldLeaf), "a leaf of a retired CA must be rejected")
	require.NoError(t, handshake(t, retired, newLeaf))
}

// requireUnknownAuthority fails unless err is the server refusing the
// client's certificate because no CA of its bundle issued it: a handshake
// that fails for another reason (an expired leaf, a key that does not match,
// a broken connection) says nothing about the bundle.
func requireUnknownAuthority(t *testing.T, err error, msg string) {
	t.Helper()
	var unknown x509.UnknownAuthorityError
	require.ErrorAs(t, err, &unknown, msg)
}

func TestOpenSSLVerifiesBothLeaves(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl is not installed; this test needs the openssl CLI")
	}
	dir := t.TempDir()
	bundlePath := filepath.Join(dir, "bundle.pem")
	require.NoError(t, os.WriteFile(bundlePath, renderedBundle(t, rotationInput("ca-2026", []string{"ca-2025"})), 0o600))
	at := strconv.FormatInt(testpki.GoldenNow.Unix(), 10)
	for _, name := range []string{"leaf-old", "leaf-new"} {
		leafPath := filepath.Join(dir, name+".pem")
		require.NoError(t, os.WriteFile(leafPath, testpki.Fixture(name).PEM(), 0o600))
		out, err := exec.Command(openssl, "verify", "-attime", at, "-CAfile", bundlePath, leafPath).CombinedOutput()
		require.NoError(t, err, "openssl verify %s: %s", name, out)
		require.Contains(t, string(out), ": OK")
	}
	// And it refuses a leaf whose CA is not in the bundle.
	caOnly := filepath.Join(dir, "new-only.pem")
	require.NoError(t, os.WriteFile(caOnly, testpki.Fixture("ca-2026").PEM(), 0o600))
	out, err := exec.Command(openssl, "verify", "-attime", at, "-CAfile", caOnly, filepath.Join(dir, "leaf-old.pem")).CombinedOutput()
	require.Error(t, err, "openssl must refuse a leaf of an untrusted CA: %s", out)
}
