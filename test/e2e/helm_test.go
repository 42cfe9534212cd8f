package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
)

// helmTemplate runs `helm template` on examples/helm/chart with rotate-certs
// as the post-renderer and the given policy.
func helmTemplate(t *testing.T, policy string) (string, string, error) {
	t.Helper()
	chart, err := filepath.Abs(filepath.Join(examplesDir, "helm", "chart"))
	require.NoError(t, err)
	return run(t, t.TempDir(), e2eharness.Tool(t, "helm"), "template", "gateway", chart, "--namespace", "envoy-gateway-system",
		"--post-renderer", binary, "--post-renderer-args", "helm-post-renderer", "--post-renderer-args", "--policy="+policy)
}

// TestHelmPostRenderer: the real `helm template --post-renderer` pipes the
// example chart through rotate-certs: the trust bundle holds the new CA and
// the old one, the rate-limit server is rolled, the policy is not among
// the documents, Helm's "# Source:" comments stay, and the output is the
// same every time at the same clock. (A chart does not commit what the
// post-renderer writes, so each build stamps the target's retired record
// with its own clock: two builds a second apart differ in that stamp, and
// the policy's spec.now pins it here.)
func TestHelmPostRenderer(t *testing.T) {
	policy := pinnedHelmPolicy(t)
	out, stderr, err := helmTemplate(t, policy)
	require.NoError(t, err, stderr)
	requireRenderedChart(t, out)

	again, _, err := helmTemplate(t, policy)
	require.NoError(t, err)
	require.Equal(t, out, again)
}

// pinnedHelmPolicy writes examples/helm's policy with spec.now pinned
// (e2eharness.PinClock, as StageExample does), so that two builds stamp the
// same retired record.
func pinnedHelmPolicy(t *testing.T) string {
	t.Helper()
	example, err := os.ReadFile(filepath.Join(examplesDir, "helm", "rotation-policy.yaml"))
	require.NoError(t, err)
	dir := t.TempDir()
	policy := filepath.Join(dir, "rotation-policy.yaml")
	require.NoError(t, os.WriteFile(policy, example, 0o644))
	e2eharness.PinClock(t, dir, e2eharness.StagedNow)
	pinned, err := os.ReadFile(policy)
	require.NoError(t, err)
	require.Contains(t, string(pinned), "\n  now: ", "the policy's clock must be pinned")
	return policy
}

// requireRenderedChart checks the example chart as the post-renderer
// leaves it: the trust bundle holds the new CA and the old one, the
// rate-limit server is rolled, the policy and key material are not among
// the documents, and Helm's "# Source:" comments and order stay.
func requireRenderedChart(t *testing.T, out string) {
	t.Helper()
	items := parseStream(t, out)
	require.Equal(t, []string{"example-ca-new", "example-ca-old"},
		bundleSubjects(t, items, kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}, "ca.crt"))
	require.Regexp(t, `rotate-certs.dev/trust-hash: '?sha256:[0-9a-f]{64}`, out)
	require.NotContains(t, out, "RotationPolicy")
	require.Contains(t, out, "# Source: gateway-client/templates/trust.yaml")
	require.NotContains(t, out, "PRIVATE KEY")
	kinds := []string{}
	for _, it := range items {
		kinds = append(kinds, it.GetKind()+"/"+it.GetName())
	}
	require.Equal(t, []string{"Secret/envoy-gateway", "Secret/envoy-gateway-trust", "Deployment/envoy-ratelimit"}, kinds, "Helm's order")
}

// TestHelmPostRendererFailsTheInstall: an error in the render makes the
// post-renderer exit 1 with nothing on stdout, and helm fails with the
// message.
func TestHelmPostRendererFailsTheInstall(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(examplesDir, "helm", "rotation-policy.yaml"))
	require.NoError(t, err)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte(strings.Replace(string(data), "{name: envoy-gateway,", "{name: envoy-gatway,", 1)), 0o644))
	out, stderr, err := helmTemplate(t, policy)
	require.Error(t, err)
	require.Empty(t, out)
	require.Contains(t, stderr, "source Secret envoy-gateway-system/envoy-gatway is not in the input")
}

// TestHelmPostRendererStdin drives the subcommand the way Helm does,
// without Helm: manifests on stdin, manifests on stdout. A local-config
// object the chart renders is input only, and a created target comes after
// the chart's documents.
func TestHelmPostRendererStdin(t *testing.T) {
	dir := stageExample(t, "envoy-gateway")
	manifests := readFile(t, filepath.Join(dir, "gateway-ca.yaml")) + "---\n" + readFile(t, filepath.Join(dir, "ratelimit.yaml")) +
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n"
	out, stderr, code := runIn(t, dir, manifests, "helm-post-renderer", "--policy", "rotation-policy.yaml")
	require.Equal(t, 0, code, stderr)
	items := parseStream(t, out)
	var names []string
	for _, it := range items {
		names = append(names, it.GetKind()+"/"+it.GetName())
	}
	require.Equal(t, []string{"Secret/envoy-gateway", "Deployment/envoy-ratelimit", "Secret/envoy-gateway-trust"}, names)
	require.NotContains(t, out, "internal.config.kubernetes.io", "no orchestrator annotations leak to Helm")
	require.NotContains(t, out, "config.kubernetes.io/index")
	require.Contains(t, stderr, "was not in the input and was created", "the warning reaches the user on stderr")

	_, stderr, code = runIn(t, dir, manifests, "helm-post-renderer")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "rotate-certs helm-post-renderer: --policy FILE is required")
}

// helm4 is Helm 4 (bin/helm4) with its home in a temporary directory and
// the rotate-certs post-renderer plugin installed with `helm plugin
// install` from a copy of examples/helm/plugin holding the binary under
// test, as a user installs it.
type helm4 struct {
	bin string
	env []string
}

func installHelm4Plugin(t *testing.T) helm4 {
	t.Helper()
	h := helm4{bin: e2eharness.Tool(t, "helm4")}
	home := t.TempDir()
	h.env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"), "HELM_DATA_HOME=" + filepath.Join(home, "data")}
	dir := filepath.Join(t.TempDir(), "rotate-certs")
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(examplesDir, "helm", "plugin"))))
	data, err := os.ReadFile(binary)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rotate-certs"), data, 0o755))

	r := e2eharness.Cmd{Env: h.env}.Run(t, h.bin, "plugin", "install", dir)
	require.NoError(t, r.Err, r.Stdout+r.Stderr)
	require.Contains(t, r.Stdout, `Installed plugin: rotate-certs`)
	r = e2eharness.Cmd{Env: h.env}.Run(t, h.bin, "plugin", "list")
	require.NoError(t, r.Err, r.Stderr)
	require.Regexp(t, `(?m)^rotate-certs\s+0\.1\.0\s+postrenderer/v1\s`, r.Stdout, "Helm 4 lists the plugin as a post-renderer")
	return h
}

// template runs Helm 4's `helm template --post-renderer rotate-certs` on
// the example chart.
func (h helm4) template(t *testing.T, policy string) (string, string, error) {
	t.Helper()
	chart, err := filepath.Abs(filepath.Join(examplesDir, "helm", "chart"))
	require.NoError(t, err)
	r := e2eharness.Cmd{Dir: t.TempDir(), Env: h.env}.Run(t, h.bin, "template", "gateway", chart, "--namespace", "envoy-gateway-system",
		"--post-renderer", "rotate-certs", "--post-renderer-args", "--policy="+policy)
	return r.Stdout, r.Stderr, r.Err
}

// TestHelm4PostRendererPlugin: Helm 4 installs examples/helm/plugin and
// runs it as the post-renderer of `helm template`; the manifests are what
// Helm 3's executable post-renderer gives.
func TestHelm4PostRendererPlugin(t *testing.T) {
	policy := pinnedHelmPolicy(t)
	h := installHelm4Plugin(t)
	out, stderr, err := h.template(t, policy)
	require.NoError(t, err, stderr)
	requireRenderedChart(t, out)

	again, _, err := h.template(t, policy)
	require.NoError(t, err)
	require.Equal(t, out, again)

	helm3, stderr, err := helmTemplate(t, policy)
	require.NoError(t, err, stderr)
	// Helm 4 frames the documents its own way (a separator first, a blank
	// line before each one); the documents are the same bytes.
	helm4Frames := strings.NewReplacer("\n\n---\n", "\n---\n")
	require.Equal(t, helm3, helm4Frames.Replace(strings.TrimPrefix(out, "---\n")),
		"Helm 4's plugin and Helm 3's executable post-renderer must render the same manifests")
}

// TestHelm4PostRendererFailsTheInstall: a failed render fails Helm 4's
// template with nothing on stdout. Helm 4 discards a plugin's stderr: its
// error names the plugin, not rotate-certs' message (the guide says how to
// see it).
func TestHelm4PostRendererFailsTheInstall(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(examplesDir, "helm", "rotation-policy.yaml"))
	require.NoError(t, err)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(policy, []byte(strings.Replace(string(data), "{name: envoy-gateway,", "{name: envoy-gatway,", 1)), 0o644))
	h := installHelm4Plugin(t)
	out, stderr, err := h.template(t, policy)
	require.Error(t, err)
	require.Empty(t, out)
	require.Contains(t, stderr, `plugin "rotate-certs" exited with error`)
}
