package rotate_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// An mTLS end-to-end test with a real server: nginx verifies client
// certificates against the bundle the function rendered, and curl presents
// leaves of the old and the new CA. nginx and curl check validity against
// the wall clock, so the certificates are made around today (Ed25519, which
// nginx, curl and OpenSSL 3 accept for client authentication).

// nginxBinary finds nginx (Debian installs it in /usr/sbin, which a
// non-root PATH may lack).
func nginxBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("nginx is not installed; `make tools` installs it (apt-get install nginx) - the real mTLS peer test needs it")
	return ""
}

// nginxServer is an nginx the test owns: its own prefix, config, pid file
// and logs in a temp dir, in the foreground as a child of the test, stopped
// by the test.
type nginxServer struct {
	port int
	cmd  *exec.Cmd
	dir  string
	// done is closed when the process has exited.
	done chan struct{}
}

const nginxConf = `daemon off;
master_process off;
pid {{dir}}/nginx.pid;
error_log {{dir}}/error.log info;
events { worker_connections 16; }
http {
  access_log {{dir}}/access.log;
  client_body_temp_path {{dir}}/body;
  proxy_temp_path {{dir}}/proxy;
  fastcgi_temp_path {{dir}}/fastcgi;
  uwsgi_temp_path {{dir}}/uwsgi;
  scgi_temp_path {{dir}}/scgi;
  server {
    listen 127.0.0.1:{{port}} ssl;
    server_name nginx.test;
    ssl_certificate {{dir}}/server.crt;
    ssl_certificate_key {{dir}}/server.key;
    ssl_client_certificate {{dir}}/bundle.pem;
    ssl_verify_client on;
    location / { return 200 "ok\n"; }
  }
}
`

// startNginx serves mTLS on a free loopback port, trusting bundle for
// client certificates. It is stopped when the test ends.
func startNginx(t *testing.T, bundle []byte, server testpki.Cert) *nginxServer {
	t.Helper()
	bin := nginxBinary(t)
	var lastLog string
	for attempt := 0; attempt < 3; attempt++ {
		dir := t.TempDir()
		port := freePort(t)
		conf := strings.NewReplacer("{{dir}}", dir, "{{port}}", fmt.Sprint(port)).Replace(nginxConf)
		for name, data := range map[string][]byte{
			"nginx.conf": []byte(conf), "bundle.pem": bundle, "server.crt": server.PEM(), "server.key": server.KeyPEM(),
		} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
		}
		cmd := exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		s := &nginxServer{port: port, cmd: cmd, dir: dir, done: make(chan struct{})}
		go func() { _ = cmd.Wait(); close(s.done) }()
		t.Cleanup(func() { s.stop(t) })
		if s.ready() {
			return s
		}
		log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		lastLog = stderr.String() + string(log)
		if !strings.Contains(lastLog, "Address already in use") {
			break // not a port race: no point retrying
		}
	}
	t.Fatalf("nginx did not start:\n%s", lastLog)
	return nil
}

// ready waits until nginx accepts connections or exits. The wait is bounded
// (nginx starts in milliseconds); it is a start-up guard, not an assertion.
func (s *nginxServer) ready() bool {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return false
		default:
		}
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), time.Second)
		if err == nil {
			conn.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// stop terminates nginx (SIGQUIT is its graceful stop; SIGKILL if it does
// not go) and makes sure no process is left.
func (s *nginxServer) stop(t *testing.T) {
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	if _, err := os.Stat(filepath.Join(s.dir, "nginx.pid")); err == nil {
		t.Errorf("nginx left its pid file behind: it did not shut down cleanly")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// get fetches / with curl, presenting client, and returns the HTTP status
// ("000" when there was no HTTP response at all).
func (s *nginxServer) get(t *testing.T, serverCA testpki.Cert, client testpki.Cert) string {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed; the nginx mTLS test needs it")
	}
	dir := t.TempDir()
	files := map[string][]byte{"ca.pem": serverCA.PEM(), "client.crt": client.PEM(), "client.key": client.KeyPEM()}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
	out, err := exec.Command(curl, "--silent", "--show-error", "--output", "/dev/null", "--write-out", "%{http_code}",
		"--max-time", "30", "--resolve", fmt.Sprintf("nginx.test:%d:127.0.0.1", s.port),
		"--cacert", filepath.Join(dir, "ca.pem"), "--cert", filepath.Join(dir, "client.crt"), "--key", filepath.Join(dir, "client.key"),
		fmt.Sprintf("https://nginx.test:%d/", s.port)).Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running curl: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// nginxInput is a ResourceList rendered at now: the CA source holds source,
// the committed trust bundle holds previous, and each leaf sits in a tls
// Secret (leaves the function sees protect their issuer).
func nginxInput(now time.Time, source testpki.Cert, previous []testpki.Cert, leaves map[string]testpki.Cert) []byte {
	b64 := func(certs ...testpki.Cert) string {
		var pem []byte
		for _, c := range certs {
			pem = append(pem, c.PEM()...)
		}
		return base64.StdEncoding.EncodeToString(pem)
	}
	s := fmt.Sprintf(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: nginx}
  spec:
    now: %q
    trustBundles:
    - name: clients
      sources:
      - secret: {name: client-ca, namespace: edge}
      target: {name: client-trust}
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: client-ca, namespace: edge}
  data: {ca.crt: %s}
- apiVersion: v1
  kind: Secret
  metadata: {name: client-trust, namespace: edge}
  data: {ca.crt: %s}
`, now.Format(time.RFC3339), b64(source), b64(previous...))
	for name, l := range leaves {
		s += fmt.Sprintf("- apiVersion: v1\n  kind: Secret\n  metadata: {name: %s, namespace: apps}\n  type: kubernetes.io/tls\n  data: {tls.crt: %s}\n", name, b64(l))
	}
	return []byte(s)
}

// renderClientTrust runs the function and returns the client-trust bundle.
func renderClientTrust(t *testing.T, input []byte) []byte {
	t.Helper()
	out, err := execute(t, input)
	require.NoError(t, err, string(out))
	for _, it := range parseResourceList(t, out).items {
		if it.GetName() == "client-trust" {
			v, found, err := kube.Lookup(it, "ca.crt")
			require.NoError(t, err)
			require.True(t, found)
			return v.Bytes
		}
	}
	t.Fatal("no client-trust Secret in the output")
	return nil
}

func TestNginxMTLSAcrossRotation(t *testing.T) {
	nginxBinary(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed; the nginx mTLS test needs it")
	}
	// Whole days, so that a run is reproducible within a day.
	today := time.Now().UTC().Truncate(24 * time.Hour)
	days := testpki.Days
	oldCA := testpki.NewCA("nginx-e2e-ca-old", today.Add(-days(200)), days(400))
	newCA := testpki.NewCA("nginx-e2e-ca-new", today.Add(-days(2)), days(400))
	nextCA := testpki.NewCA("nginx-e2e-ca-next", today.Add(-days(1)), days(400))
	serverCA := testpki.NewCA("nginx-e2e-server-ca", today.Add(-days(10)), days(400))
	server := testpki.NewLeaf("nginx.test", serverCA, today.Add(-days(10)), days(100))
	oldLeaf := testpki.NewLeaf("client-old.test", oldCA, today.Add(-days(30)), days(90))
	newLeaf := testpki.NewLeaf("client-new.test", newCA, today.Add(-days(1)), days(90))

	// The overlap: the source already holds the new CA, the committed
	// bundle the old one, a peer still presents a leaf of the old CA.
	overlap := renderClientTrust(t, nginxInput(today, newCA, []testpki.Cert{oldCA},
		map[string]testpki.Cert{"client-old": oldLeaf}))
	requireBundle(t, overlap, newCA, oldCA)
	srv := startNginx(t, overlap, server)
	require.Equal(t, "200", srv.get(t, serverCA, oldLeaf), "a leaf of the old CA must be accepted during the overlap")
	require.Equal(t, "200", srv.get(t, serverCA, newLeaf), "a leaf of the new CA must be accepted during the overlap")

	// The old leaf has been re-issued and the next CA arrived: the old CA
	// is retired (maxPrevious 1) and nginx refuses its leaf.
	retired := renderClientTrust(t, nginxInput(today, nextCA, []testpki.Cert{newCA, oldCA},
		map[string]testpki.Cert{"client-new": newLeaf}))
	requireBundle(t, retired, nextCA, newCA)
	srv = startNginx(t, retired, server)
	require.Equal(t, "400", srv.get(t, serverCA, oldLeaf), "a leaf of the retired CA must be refused")
	require.Equal(t, "200", srv.get(t, serverCA, newLeaf), "a leaf of the previous CA is still trusted")
}

func requireBundle(t *testing.T, bundle []byte, want ...testpki.Cert) {
	t.Helper()
	d, err := pki.DecodePEM(bundle)
	require.NoError(t, err)
	var got, exp []string
	for _, c := range d.Certificates {
		got = append(got, pki.Subject(c))
	}
	for _, c := range want {
		exp = append(exp, pki.Subject(c.Cert))
	}
	require.Equal(t, exp, got)
}
