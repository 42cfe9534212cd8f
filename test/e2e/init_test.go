package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
)

// bareExample stages examples/envoy-gateway the way a new user has it:
// no policy, a kustomization without transformers, a Kptfile without a
// pipeline. It returns the staging root (with bin/rotate-certs) and the
// package directory, relative to the root.
func bareExample(t *testing.T) (root, pkg string) {
	t.Helper()
	dir := stageExample(t, "envoy-gateway")
	root = filepath.Dir(filepath.Dir(dir))
	require.NoError(t, os.Remove(filepath.Join(dir, "rotation-policy.yaml")))
	cut := func(file, from string) {
		data, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
		text, _, found := strings.Cut(string(data), from)
		require.True(t, found, "%s has %s", file, from)
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644))
	}
	cut("kustomization.yaml", "transformers:")
	cut("Kptfile", "pipeline:")
	return root, "examples/envoy-gateway"
}

// TestInitThenKustomizeBuild: `init --exec --kustomization` followed by
// `kustomize build --enable-alpha-plugins --enable-exec` renders the trust
// bundle with no hand edits - the real kustomize runs the real binary the
// annotation names. Running init again leaves the kustomization alone.
func TestInitThenKustomizeBuild(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	root, pkg := bareExample(t)
	stdout, stderr, code := runIn(t, root, "", "init", pkg, "--now", checkNow,
		"-o", pkg+"/rotation-policy.yaml", "--exec", "bin/rotate-certs", "--kustomization", pkg+"/kustomization.yaml")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "wrote "+pkg+"/rotation-policy.yaml\nwrote "+pkg+"/kustomization.yaml\n", stdout)
	policy, err := os.ReadFile(filepath.Join(root, pkg, "rotation-policy.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(policy), "    config.kubernetes.io/function: |\n      exec:\n        path: ../../bin/rotate-certs\n",
		"the exec path as kustomize resolves it, from the kustomization's directory")
	k, err := os.ReadFile(filepath.Join(root, pkg, "kustomization.yaml"))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(k), "- envoy.yaml\ntransformers:\n- rotation-policy.yaml\n"), "%s", k)

	out, stderr, err := run(t, filepath.Join(root, pkg), kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
	require.NoError(t, err, stderr)
	items := parseStream(t, out)
	require.Equal(t, []string{"example-ca-new", "example-ca-old"},
		bundleSubjects(t, items, kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}, "ca.crt"),
		"the new CA and the old one during the overlap")
	require.Regexp(t, regexp.MustCompile(`rotate-certs.dev/trust-hash: sha256:[0-9a-f]{64}`), out, "the rate-limit server is rolled")

	stdout, stderr, code = runIn(t, root, "", "init", pkg, "--now", checkNow,
		"-o", pkg+"/rotation-policy.yaml", "--exec", "bin/rotate-certs", "--kustomization", pkg+"/kustomization.yaml")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "unchanged "+pkg+"/kustomization.yaml")
	again, err := os.ReadFile(filepath.Join(root, pkg, "kustomization.yaml"))
	require.NoError(t, err)
	require.Equal(t, string(k), string(again))
}

// TestInitKustomizationAsWritten: init edits a kustomization with CRLF
// line ends (a Windows checkout) without rewriting its other lines, and
// kustomize still builds it; a kustomization that defines a key twice is
// refused, naming the file and both lines, and nothing is written - as
// init refuses such input.
func TestInitKustomizationAsWritten(t *testing.T) {
	root, pkg := bareExample(t)
	k := filepath.Join(root, pkg, "kustomization.yaml")
	lf, err := os.ReadFile(k)
	require.NoError(t, err)
	crlf := strings.ReplaceAll(string(lf), "\n", "\r\n")
	require.NoError(t, os.WriteFile(k, []byte(crlf), 0o644))
	_, stderr, code := runIn(t, root, "", "init", pkg, "--now", checkNow,
		"-o", pkg+"/rotation-policy.yaml", "--exec", "bin/rotate-certs", "--kustomization", pkg+"/kustomization.yaml")
	require.Equal(t, 0, code, stderr)
	edited := readFile(t, k)
	require.Equal(t, crlf+"transformers:\r\n- rotation-policy.yaml\r\n", edited, "every line keeps its CRLF")
	t.Run("kustomize builds it", func(t *testing.T) {
		kustomize := e2eharness.Tool(t, "kustomize")
		_, stderr, err := run(t, filepath.Join(root, pkg), kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
		require.NoError(t, err, stderr)
	})

	dup := strings.Replace(string(lf), "resources:\n", "resources:\n- extra.yaml\nresources:\n", 1)
	require.NoError(t, os.WriteFile(k, []byte(dup), 0o644))
	require.NoError(t, os.Remove(filepath.Join(root, pkg, "rotation-policy.yaml")))
	before := e2eharness.Files(t, root)
	_, stderr, code = runIn(t, root, "", "init", pkg, "--now", checkNow,
		"-o", pkg+"/rotation-policy.yaml", "--exec", "bin/rotate-certs", "--kustomization", pkg+"/kustomization.yaml")
	require.Equal(t, 1, code, stderr)
	require.Regexp(t, `kustomization.yaml:\d+: mapping key "resources" already defined at line \d+`, stderr)
	require.Equal(t, before, e2eharness.Files(t, root), "nothing written")
}

// TestInitThenKptFnRender: `init --exec --kptfile` followed by `kpt fn
// render --allow-exec` (from the package directory) renders the package
// in place with no hand edits.
func TestInitThenKptFnRender(t *testing.T) {
	kpt := e2eharness.Tool(t, "kpt")
	root, pkg := bareExample(t)
	_, stderr, code := runIn(t, root, "", "init", pkg, "--now", checkNow,
		"-o", pkg+"/rotation-policy.yaml", "--exec", "bin/rotate-certs", "--kptfile", pkg+"/Kptfile")
	require.Equal(t, 0, code, stderr)
	kptfile, err := os.ReadFile(filepath.Join(root, pkg, "Kptfile"))
	require.NoError(t, err)
	require.Contains(t, string(kptfile), "pipeline:\n  mutators:\n  - exec: ../../bin/rotate-certs\n    configPath: rotation-policy.yaml\n")
	require.Contains(t, string(kptfile), "description: Envoy Gateway CA rotation with an overlap trust bundle", "the rest of the Kptfile stays")

	dir := filepath.Join(root, pkg)
	gitInit(t, dir, nil)
	_, stderr, err = run(t, dir, kpt, "fn", "render", "--allow-exec")
	require.NoError(t, err, stderr)
	diff, _, err := run(t, dir, "git", "diff", "--stat")
	require.NoError(t, err)
	require.Contains(t, diff, "trust.yaml")
	require.Contains(t, diff, "ratelimit.yaml")
	items := parseStream(t, readFile(t, filepath.Join(dir, "trust.yaml")))
	require.Equal(t, []string{"example-ca-new", "example-ca-old"},
		bundleSubjects(t, items, kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}, "ca.crt"))
}

// TestInitWiringMistakes: flag combinations that cannot work are usage
// errors (exit 2) and write nothing.
func TestInitWiringMistakes(t *testing.T) {
	root, pkg := bareExample(t)
	before := e2eharness.Files(t, root)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kustomization", pkg + "/kustomization.yaml"}, "--kustomization and --kptfile need --output FILE"},
		{[]string{"-o", pkg + "/p.yaml", "--kptfile", pkg + "/Kptfile"}, "--kptfile needs --exec PATH or --image REF"},
		{[]string{"--exec", "bin/rotate-certs", "--image", "x"}, "--exec and --image exclude each other"},
	} {
		_, stderr, code := runIn(t, root, "", append([]string{"init", pkg}, tc.args...)...)
		require.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.want)
	}
	require.Equal(t, before, e2eharness.Files(t, root))
}

// TestInitProposesOnlyCASources: the rate-limit client's Secret carries,
// beside its leaf, the old CA that issued it (ca.crt) - the CA the
// existing trust bundle holds. init proposes one bundle, from the CA's
// Secret, and says on stderr why the leaf Secret is not a source.
func TestInitProposesOnlyCASources(t *testing.T) {
	root, pkg := bareExample(t)
	dir := filepath.Join(root, pkg)
	trust := readFile(t, filepath.Join(dir, "trust.yaml"))
	oldCA := regexp.MustCompile(`(?m)^  ca.crt: (\S+)$`).FindStringSubmatch(trust)
	require.NotNil(t, oldCA, "trust.yaml holds the old CA")
	client := readFile(t, filepath.Join(dir, "ratelimit-client.yaml"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ratelimit-client.yaml"), []byte(client+"  ca.crt: "+oldCA[1]+"\n"), 0o644))

	policy, stderr, code := runIn(t, root, "", "init", pkg, "--now", checkNow)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 1, strings.Count(policy, "\n  - name: "), "one bundle:\n%s", policy)
	require.Contains(t, policy, "  - name: envoy-gateway\n")
	require.Contains(t, stderr, "rotate-certs init: Secret envoy-gateway-system/ratelimit-client holds a leaf and, in ca.crt, the CA that issued it (\"CN=example-ca-old,O=rotate-certs test\", issued 2026-01-01): an older root that an existing trust bundle already carries as a previous CA - not proposed as a source")
}
