package e2e

import (
	"crypto/x509"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// End-to-end tests of examples/trust-manager and examples/in-cluster-ca:
// CA Secrets that live in the cluster, read from local-config snapshots.

// trustManagerView is what trust-manager would put in its target
// ConfigMaps: every certificate of the Bundle's sources that the package
// holds (the snapshot Secret) and of its inLine sources.
func trustManagerView(t *testing.T, items []*yaml.RNode) []*x509.Certificate {
	t.Helper()
	var certs []*x509.Certificate
	for _, it := range items {
		switch {
		case it.GetKind() == "Secret" && it.GetName() == "corp-root-ca":
			v, found, err := kube.Lookup(it, "ca.crt")
			require.NoError(t, err)
			require.True(t, found)
			d, err := pki.DecodePEM(v.Bytes)
			require.NoError(t, err)
			certs = append(certs, d.Certificates...)
		case it.GetKind() == "Bundle":
			certs = append(certs, inLineCerts(t, it)...)
		}
	}
	return certs
}

// inLineCerts returns the certificates of a trust-manager Bundle's inLine
// sources (rotate-certs' own and any other), in order.
func inLineCerts(t *testing.T, bundle *yaml.RNode) []*x509.Certificate {
	t.Helper()
	seq, err := bundle.Pipe(yaml.Lookup("spec", "sources"))
	require.NoError(t, err)
	var certs []*x509.Certificate
	for _, e := range seq.YNode().Content {
		if v, _ := yaml.NewRNode(e).Pipe(yaml.Lookup("inLine")); v != nil {
			d, err := pki.DecodePEM([]byte(v.YNode().Value))
			require.NoError(t, err)
			certs = append(certs, d.Certificates...)
		}
	}
	return certs
}

// requireBothLeavesVerify checks that a leaf of the old and of the new
// example CA both verify against certs.
func requireBothLeavesVerify(t *testing.T, certs []*x509.Certificate) {
	t.Helper()
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	for _, name := range []string{"example-leaf-old", "example-leaf-new"} {
		leaf := testpki.Fixture(name).Cert
		_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: leaf.NotBefore.AddDate(0, 6, 0)})
		require.NoError(t, err, "%s must verify", name)
	}
}

func TestTrustManagerExample(t *testing.T) {
	t.Run("kustomize", func(t *testing.T) {
		kustomize := e2eharness.Tool(t, "kustomize")
		dir := stageExample(t, "trust-manager")
		out, _ := kustomizeBuild(t, kustomize, dir)
		items := parseStream(t, out)
		for _, it := range items {
			require.NotEqual(t, "corp-root-ca", it.GetName(), "kustomize must not emit the local-config snapshot: it would be applied over the live Secret")
		}
		snapshot := parseStream(t, readFile(t, filepath.Join(dir, "corp-root-ca.yaml")))
		requireBothLeavesVerify(t, trustManagerView(t, append(items, snapshot...)))
	})
	t.Run("kpt", func(t *testing.T) {
		kpt := e2eharness.Tool(t, "kpt")
		dir := stageExample(t, "trust-manager")
		kptRender(t, kpt, dir)
		changed, _, err := run(t, dir, "git", "diff", "--name-only")
		require.NoError(t, err)
		require.Equal(t, "bundle.yaml\n", changed, "only the Bundle changes; the snapshot is input")
		before, _, err := run(t, dir, "git", "show", "HEAD:bundle.yaml")
		require.NoError(t, err)
		require.Equal(t, userSources(t, before), userSources(t, readFile(t, filepath.Join(dir, "bundle.yaml"))), "the user's sources are never edited")
		requireBothLeavesVerify(t, trustManagerView(t, readPackage(t, dir)))
		requireRenderStable(t, kpt, dir, "trust-manager")
	})
}

// userSources returns the Bundle's spec.sources without rotate-certs' own
// inLine source, as YAML.
func userSources(t *testing.T, bundle string) string {
	t.Helper()
	node, err := yaml.Parse(bundle)
	require.NoError(t, err)
	seq, err := node.Pipe(yaml.Lookup("spec", "sources"))
	require.NoError(t, err)
	var keep []*yaml.Node
	for _, e := range seq.YNode().Content {
		if v, _ := yaml.NewRNode(e).Pipe(yaml.Lookup("inLine")); v != nil && strings.HasPrefix(v.YNode().Value, "# managed-by: rotate-certs.dev/") {
			continue
		}
		keep = append(keep, e)
	}
	seq.YNode().Content = keep
	s, err := seq.String()
	require.NoError(t, err)
	return s
}

// inClusterRepo is a git repository holding examples/in-cluster-ca at its
// root, with rotate-certs and a kubectl that prints the checked-in
// `kubectl get` output on the PATH.
func inClusterRepo(t *testing.T) (dir string, env []string) {
	t.Helper()
	root := t.TempDir()
	bin, env := scriptEnv(t, root,
		"GIT_AUTHOR_NAME=ci", "GIT_AUTHOR_EMAIL=ci@example.com", "GIT_COMMITTER_NAME=ci", "GIT_COMMITTER_EMAIL=ci@example.com")
	fixture, err := filepath.Abs(filepath.Join(examplesDir, "in-cluster-ca", "testdata", "kubectl-get-envoy-gateway.txt"))
	require.NoError(t, err)
	kubectl := "#!/bin/sh\n" +
		"if [ \"$*\" = \"get secret envoy-gateway -n envoy-gateway-system -o yaml\" ]; then cat '" + fixture + "'; exit 0; fi\n" +
		"echo \"kubectl stub: unexpected arguments: $*\" >&2; exit 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "kubectl"), []byte(kubectl), 0o755))
	dir = filepath.Join(root, "repo")
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(examplesDir, "in-cluster-ca"))))
	e2eharness.PinClock(t, dir, e2eharness.StagedNow)
	require.NoError(t, os.Chmod(filepath.Join(dir, "refresh.sh"), 0o755))
	gitInit(t, dir, env)
	return dir, env
}

// TestInClusterCAFlow runs examples/in-cluster-ca/refresh.sh as CI would:
// kubectl get (the real kubectl output of a rotated certgen Secret,
// checked in) -> rotate-certs snapshot -> rotate-certs render -> commit.
// The snapshot keeps the certificates and not the key, the trust bundle
// carries the old and the new CA, and a second run commits nothing.
func TestInClusterCAFlow(t *testing.T) {
	fixture := readFile(t, filepath.Join(examplesDir, "in-cluster-ca", "testdata", "kubectl-get-envoy-gateway.txt"))
	require.Contains(t, fixture, "tls.key:", "the fixture must hold a key for this test to mean anything")
	require.Contains(t, fixture, "resourceVersion:", "the fixture is kubectl output")
	dir, env := inClusterRepo(t)

	refresh := e2eharness.Cmd{Dir: dir, Env: env}
	r := refresh.Run(t, "./refresh.sh")
	out := r.Stdout + r.Stderr
	require.NoError(t, r.Err, "%s", out)
	require.Contains(t, out, "dropped data.tls.key: a private key")
	require.Contains(t, out, "refresh: committed")
	log := git(t, dir, env, "log", "--format=%s", "--name-only", "-1")
	require.Contains(t, log, "snapshot_envoy-gateway-system_envoy-gateway.yaml")
	require.Contains(t, log, "trust.yaml")

	snapshot := readFile(t, filepath.Join(dir, "snapshot_envoy-gateway-system_envoy-gateway.yaml"))
	require.NotContains(t, snapshot, "tls.key")
	require.NotContains(t, snapshot, "resourceVersion")
	require.Contains(t, snapshot, `config.kubernetes.io/local-config: "true"`)
	items := readPackage(t, dir)
	target := kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}
	require.Equal(t, []string{"example-ca-new", "example-ca-old"}, bundleSubjects(t, items, target, "ca.crt"))

	r = refresh.Run(t, "./refresh.sh")
	out = r.Stdout + r.Stderr
	require.NoError(t, r.Err, "%s", out)
	require.Contains(t, out, "nothing to commit")
	require.Equal(t, "2\n", git(t, dir, env, "rev-list", "--count", "HEAD"), "the second run commits nothing")

	// A kubectl that fails leaves the snapshot and the repository alone.
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(dir), "bin", "kubectl"), []byte("#!/bin/sh\necho 'Unable to connect to the server' >&2\nexit 1\n"), 0o755))
	r = refresh.Run(t, "./refresh.sh")
	require.Error(t, r.Err, "%s%s", r.Stdout, r.Stderr)
	require.Equal(t, snapshot, readFile(t, filepath.Join(dir, "snapshot_envoy-gateway-system_envoy-gateway.yaml")))
	require.Empty(t, git(t, dir, env, "status", "--porcelain"))
}

// TestInClusterCAKustomize: kustomize reads the snapshot as input and
// leaves it out of what it emits (what Flux and Argo CD apply).
func TestInClusterCAKustomize(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	dir := stageExample(t, "in-cluster-ca")
	out, stderr, err := run(t, dir, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
	require.NoError(t, err, stderr)
	items := parseStream(t, out)
	require.Len(t, items, 1, "only the trust Secret is applied")
	require.Equal(t, "envoy-gateway-trust", items[0].GetName())
	v, found, err := kube.Lookup(items[0], "ca.crt")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, base64.StdEncoding.EncodeToString(testpki.Fixture("example-ca-old").PEM()), base64.StdEncoding.EncodeToString(v.Bytes),
		"the committed snapshot holds the old CA until refresh.sh takes a new one")
}

func TestInClusterCAKpt(t *testing.T) {
	kpt := e2eharness.Tool(t, "kpt")
	dir := stageExample(t, "in-cluster-ca")
	kptRender(t, kpt, dir)
	changed, _, err := run(t, dir, "git", "status", "--porcelain")
	require.NoError(t, err)
	require.Equal(t, " M trust.yaml\n", changed, "only the target changes (it gains rotate-certs' annotations)")
	target := kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}
	require.Equal(t, []string{"example-ca-old"}, bundleSubjects(t, readPackage(t, dir), target, "ca.crt"), "the committed snapshot still holds the old CA")
	requireRenderStable(t, kpt, dir, "in-cluster-ca")
}
