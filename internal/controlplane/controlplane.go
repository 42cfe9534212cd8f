package controlplane

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Options choose what Start runs.
type Options struct {
	// ControllerManager also starts kube-controller-manager with the
	// controllers that turn workloads into ReplicaSets and
	// ControllerRevisions, and the garbage collector that deletes them.
	ControllerManager bool
	// Ready bounds how long Start waits for each component to answer its
	// health check; zero means five minutes (a loaded 2-CPU machine).
	Ready time.Duration
}

// Controllers are the kube-controller-manager controllers Start runs: what
// rolls workloads, what deletes their ReplicaSets and pods, what gives each
// namespace its default ServiceAccount (pods need it to be admitted).
var Controllers = []string{
	"deployment-controller", "replicaset-controller", "statefulset-controller",
	"daemonset-controller", "garbage-collector-controller", "namespace-controller",
	"serviceaccount-controller", "serviceaccount-token-controller",
}

// APIServerFlags are kube-apiserver flags beyond the wiring: the
// ClusterTrustBundle API (beta and off by default in 1.33) is served so that
// ClusterTrustBundle targets can be applied.
var APIServerFlags = []string{
	"--feature-gates=ClusterTrustBundle=true",
	"--runtime-config=certificates.k8s.io/v1beta1/clustertrustbundles=true",
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	// Dir is the temporary directory with certificates, kubeconfig, etcd's
	// data and every component's log.
	Dir string
	// Kubeconfig is the path of an admin (system:masters) kubeconfig.
	Kubeconfig string
	// Server is the API server's URL, https://127.0.0.1:<port>.
	Server string
	// CAPEM is the CA that signed the API server's serving certificate and
	// the admin client certificate.
	CAPEM []byte
	// Binaries are the programs it runs; Kubectl is the pinned kubectl.
	Binaries Binaries

	client *http.Client
	procs  []*process
}

// process is one started component.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// RequireBinaries returns the binaries, or skips the test, naming `make
// tools`, when they are not built.
func RequireBinaries(t testing.TB) Binaries {
	t.Helper()
	bins, err := FindBinaries()
	if errors.Is(err, ErrMissing) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return bins
}

// Start builds certificates and a kubeconfig in a temporary directory,
// starts etcd and kube-apiserver (and kube-controller-manager when asked)
// on 127.0.0.1 ports that were free, waits until they are healthy, and
// registers their shutdown with t.Cleanup, so no process outlives the test
// even when it fails. It skips the test when the binaries are not built.
func Start(t testing.TB, opts Options) *ControlPlane {
	t.Helper()
	bins := RequireBinaries(t)
	if opts.Ready == 0 {
		opts.Ready = 5 * time.Minute
	}
	// A port found free can be taken by another process before a
	// component binds it: then start again on other ports.
	for attempt := 1; ; attempt++ {
		cp := &ControlPlane{Dir: t.TempDir(), Binaries: bins}
		t.Cleanup(func() { cp.stop(t) })
		err := cp.start(opts)
		if err == nil {
			return cp
		}
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("starting the control plane again: %v", err)
		cp.discard()
	}
}

func (cp *ControlPlane) start(opts Options) error {
	files, err := cp.writePKI()
	if err != nil {
		return err
	}
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, apiPort, kcmPort := ports[0], ports[1], ports[2], ports[3]
	etcdURL, err := cp.startEtcd(opts, etcdClient, etcdPeer)
	if err != nil {
		return err
	}
	if err := cp.startAPIServer(opts, files, etcdURL, apiPort); err != nil {
		return err
	}
	if !opts.ControllerManager {
		return nil
	}
	return cp.startControllerManager(opts, files, kcmPort)
}

// pkiFiles are the certificates and keys the components read.
type pkiFiles struct {
	ca                     keyPair
	caFile                 string
	servingCrt, servingKey string
	adminCrt, adminKey     string
	saKey, saPub           string
}

// writePKI makes the control plane's CA, the API server's serving
// certificate, the admin client certificate (which cp.client presents)
// and the service-account token signer, under cp.Dir.
func (cp *ControlPlane) writePKI() (pkiFiles, error) {
	var f pkiFiles
	ca, err := newCA("rotate-certs test control plane CA")
	if err != nil {
		return f, err
	}
	f.ca = ca
	cp.CAPEM = ca.certPEM()
	f.caFile = filepath.Join(cp.Dir, "ca.crt")
	if err := os.WriteFile(f.caFile, cp.CAPEM, 0o644); err != nil {
		return f, err
	}
	serving, err := ca.newServing("kube-apiserver")
	if err != nil {
		return f, err
	}
	if f.servingCrt, f.servingKey, err = serving.write(filepath.Join(cp.Dir, "serving")); err != nil {
		return f, err
	}
	admin, err := ca.newClient("rotate-certs-test-admin", "system:masters")
	if err != nil {
		return f, err
	}
	if f.adminCrt, f.adminKey, err = admin.write(filepath.Join(cp.Dir, "admin")); err != nil {
		return f, err
	}
	// The service-account token signer.
	sa, err := newCA("service-accounts")
	if err != nil {
		return f, err
	}
	if _, f.saKey, err = sa.write(filepath.Join(cp.Dir, "service-accounts")); err != nil {
		return f, err
	}
	f.saPub = filepath.Join(cp.Dir, "service-accounts.pub")
	if err := sa.writePublic(f.saPub); err != nil {
		return f, err
	}
	pair, err := tls.LoadX509KeyPair(f.adminCrt, f.adminKey)
	if err != nil {
		return f, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cp.CAPEM)
	cp.client = &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}},
	}
	return f, nil
}

// startEtcd starts etcd on the two ports and waits until it is healthy;
// it returns its client URL.
func (cp *ControlPlane) startEtcd(opts Options, clientPort, peerPort int) (string, error) {
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	if err := cp.run("etcd", cp.Binaries.Etcd,
		"--name=test", "--data-dir="+filepath.Join(cp.Dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=test="+peerURL,
		"--unsafe-no-fsync", "--log-level=warn",
	); err != nil {
		return "", err
	}
	return etcdURL, cp.waitHealthy(opts.Ready, "etcd", etcdURL+"/health", http.DefaultClient)
}

// startAPIServer starts kube-apiserver on port, waits until it is ready,
// and writes the admin kubeconfig.
func (cp *ControlPlane) startAPIServer(opts Options, f pkiFiles, etcdURL string, port int) error {
	cp.Server = "https://127.0.0.1:" + strconv.Itoa(port)
	apiArgs := append([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + f.servingCrt, "--tls-private-key-file=" + f.servingKey,
		"--client-ca-file=" + f.caFile,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f.saPub, "--service-account-signing-key-file=" + f.saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--profiling=false", "--v=1",
	}, APIServerFlags...)
	if err := cp.run("kube-apiserver", cp.Binaries.APIServer, apiArgs...); err != nil {
		return err
	}
	if err := cp.waitHealthy(opts.Ready, "kube-apiserver", cp.Server+"/readyz", cp.client); err != nil {
		return err
	}
	cp.Kubeconfig = filepath.Join(cp.Dir, "admin.kubeconfig")
	return os.WriteFile(cp.Kubeconfig, kubeconfig(cp.Server, f.caFile, f.adminCrt, f.adminKey), 0o600)
}

// startControllerManager starts kube-controller-manager on port with
// Controllers and waits until it is healthy.
func (cp *ControlPlane) startControllerManager(opts Options, f pkiFiles, port int) error {
	kcmServing, err := f.ca.newServing("kube-controller-manager")
	if err != nil {
		return err
	}
	kcmCrt, kcmKey, err := kcmServing.write(filepath.Join(cp.Dir, "controller-manager"))
	if err != nil {
		return err
	}
	if err := cp.run("kube-controller-manager", cp.Binaries.ControllerManager,
		"--kubeconfig="+cp.Kubeconfig,
		"--authentication-kubeconfig="+cp.Kubeconfig, "--authorization-kubeconfig="+cp.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+kcmCrt, "--tls-private-key-file="+kcmKey,
		"--controllers="+strings.Join(Controllers, ","),
		"--service-account-private-key-file="+f.saKey, "--root-ca-file="+f.caFile,
		"--flex-volume-plugin-dir="+filepath.Join(cp.Dir, "flexvolume"),
		"--leader-elect=false", "--profiling=false", "--v=1",
	); err != nil {
		return err
	}
	return cp.waitHealthy(opts.Ready, "kube-controller-manager", "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz", cp.client)
}

// kubeconfig is an admin kubeconfig for the server.
func kubeconfig(server, ca, crt, key string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, certificate-authority: %q}
users:
- name: admin
  user: {client-certificate: %q, client-key: %q}
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
`, server, ca, crt, key)
}

// freePorts returns n distinct TCP ports of 127.0.0.1 that were free a
// moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// run starts a component with its output in <Dir>/<name>.log. It dies with
// the test process even if the test binary is killed (Pdeathsig).
func (cp *ControlPlane) run(name, bin string, args ...string) error {
	logPath := filepath.Join(cp.Dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = cp.Dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	cp.procs = append(cp.procs, p)
	return nil
}

// waitHealthy polls url until it answers 200, the component exits or the
// time is up; the error carries the end of the component's log.
func (cp *ControlPlane) waitHealthy(limit time.Duration, name, url string, client *http.Client) error {
	p := cp.procs[len(cp.procs)-1]
	deadline := time.Now().Add(limit)
	var last string
	for {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was healthy (%v):\n%s", name, p.err, tail(p.log))
		default:
		}
		resp, err := client.Get(url)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, body)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not healthy after %s (last answer: %s):\n%s", name, limit, last, tail(p.log))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the components in reverse order by PID: SIGTERM, then SIGKILL
// for one that has not exited within 20 seconds. A component that died on
// its own during the test is reported with its log.
func (cp *ControlPlane) stop(t testing.TB) {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		p := cp.procs[i]
		select {
		case <-p.done:
			t.Errorf("%s (pid %d) exited during the test: %v\n%s", p.name, p.cmd.Process.Pid, p.err, tail(p.log))
			continue
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	cp.procs = nil
}

// discard stops what a failed start left running, without reporting it.
func (cp *ControlPlane) discard() {
	for _, p := range cp.procs {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	cp.procs = nil
}

// PIDs returns the process ids of the running components.
func (cp *ControlPlane) PIDs() []int {
	var pids []int
	for _, p := range cp.procs {
		pids = append(pids, p.cmd.Process.Pid)
	}
	return pids
}

// tail returns the last lines of a log file.
func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

// Kubectl runs the pinned kubectl against the control plane with stdin as
// its standard input. The error carries stderr.
func (cp *ControlPlane) Kubectl(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, cp.Binaries.Kubectl, append([]string{"--kubeconfig=" + cp.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Do sends one request to the API server as the admin user and returns the
// status code and body.
func (cp *ControlPlane) Do(ctx context.Context, method, path, contentType string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, cp.Server+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := cp.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
