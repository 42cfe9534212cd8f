package e2e

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// End-to-end tests: the real rotate-certs binary driven by the real
// kustomize and kpt binaries over the examples.

// bundleSubjects returns the common names in key of the object named key.
func bundleSubjects(t *testing.T, items []*yaml.RNode, k kube.Key, dataKey string) []string {
	t.Helper()
	for _, it := range items {
		if kube.KeyOf(it) != k {
			continue
		}
		v, found, err := kube.Lookup(it, dataKey)
		require.NoError(t, err)
		require.True(t, found, "%s has no %s", k, dataKey)
		d, err := pki.DecodePEM(v.Bytes)
		require.NoError(t, err)
		var cns []string
		for _, c := range d.Certificates {
			cns = append(cns, c.Subject.CommonName)
		}
		return cns
	}
	t.Fatalf("%s not in output", k)
	return nil
}

var exampleBundles = []struct {
	example string
	target  kube.Key
	key     string
	want    []string
}{
	{"envoy-gateway", kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}, "ca.crt", []string{"example-ca-new", "example-ca-old"}},
	{"kyma-gateway", kube.Key{Kind: "Secret", Namespace: "istio-system", Name: "kyma-gateway-certs-cacert"}, "cacert", []string{"example-ca-new", "example-ca-old"}},
	{"multi-signer", kube.Key{Kind: "ConfigMap", Namespace: "platform-trust", Name: "cluster-trust-bundle"}, "ca-bundle.crt", []string{"example-signer-a-2", "example-signer-b-1", "example-signer-a-1"}},
	// Chains: each anchor keeps its subject across generations; the new one
	// is first (newest NotBefore).
	{"linkerd", kube.Key{Kind: "ConfigMap", Namespace: "linkerd", Name: "linkerd-identity-trust-roots"}, "ca-bundle.crt", []string{"root.linkerd.cluster.local", "root.linkerd.cluster.local"}},
	{"istio", kube.Key{Kind: "Secret", Namespace: "istio-system", Name: "cacerts"}, "root-cert.pem", []string{"Root CA", "Root CA"}},
	{"cert-manager", kube.Key{Kind: "ConfigMap", Namespace: "shop", Name: "platform-trust"}, "ca.crt", []string{"platform-root-ca", "platform-root-ca"}},
}

func TestKustomizeBuildExamples(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	for _, ex := range exampleBundles {
		t.Run(ex.example, func(t *testing.T) {
			dir := stageExample(t, ex.example)
			out, _ := kustomizeBuild(t, kustomize, dir)
			require.Equal(t, ex.want, bundleSubjects(t, parseStream(t, out), ex.target, ex.key))
		})
	}
}

// TestKustomizeWithoutEnableExecIsANoOp documents a trap: without
// --enable-exec kustomize silently skips the function.
func TestKustomizeWithoutEnableExecIsANoOp(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	dir := stageExample(t, "envoy-gateway")
	out, stderr, err := run(t, dir, kustomize, "build", "--enable-alpha-plugins", ".")
	require.NoError(t, err, stderr)
	require.Contains(t, out, "name: envoy-gateway-trust")
	require.NotContains(t, out, "rotate-certs.dev/bundle-hash", "kustomize ran the exec function without --enable-exec")
}

func TestKptRenderExamples(t *testing.T) {
	kpt := e2eharness.Tool(t, "kpt")
	for _, ex := range exampleBundles {
		t.Run(ex.example, func(t *testing.T) {
			dir := stageExample(t, ex.example)
			plant := func(t *testing.T, dir string) { plantComments(t, dir, ex.target) }
			plant(t, dir)
			kptfile, err := os.ReadFile(filepath.Join(dir, "Kptfile"))
			require.NoError(t, err)
			before := e2eharness.Files(t, dir)

			kptRender(t, kpt, dir)
			items := readPackage(t, dir)
			require.Equal(t, ex.want, bundleSubjects(t, items, ex.target, ex.key))

			// Only the target may change; the Kptfile, the policy and every
			// other file stay byte-identical, comments included.
			changed, _, err := run(t, dir, "git", "diff", "--name-only")
			require.NoError(t, err)
			for _, f := range strings.Fields(changed) {
				require.NotEqual(t, "Kptfile", f)
				require.NotEqual(t, "rotation-policy.yaml", f)
			}
			after, err := os.ReadFile(filepath.Join(dir, "Kptfile"))
			require.NoError(t, err)
			require.Equal(t, string(kptfile), string(after))
			requireCommentsKept(t, before, e2eharness.Files(t, dir))

			requireRenderStable(t, kpt, dir, ex.example, plant)
		})
	}
}

// requireRenderStable takes dir, a copy of example that kpt has rendered once,
// and checks that a second kpt render changes nothing and that
// `rotate-certs render`, run twice on a fresh copy of example (given what
// prepare did to dir before kpt rendered it), writes exactly the files kpt
// wrote.
func requireRenderStable(t *testing.T, kpt, dir, example string, prepare ...func(t *testing.T, dir string)) {
	t.Helper()
	snapshot := e2eharness.Files(t, dir)
	_, stderr, err := run(t, dir, kpt, "fn", "render", "--allow-exec")
	require.NoError(t, err, stderr)
	require.Equal(t, snapshot, e2eharness.Files(t, dir), "the second kpt render must change nothing")

	plain := stageExample(t, example)
	for _, p := range prepare {
		p(t, plain)
	}
	original := e2eharness.Files(t, plain)
	for i := 0; i < 2; i++ {
		_, stderr, err = run(t, plain, binary, "render", ".", "--policy", "rotation-policy.yaml")
		require.NoError(t, err, stderr)
		rendered := e2eharness.Files(t, plain)
		// kpt puts the input's comments back on what a function returns:
		// a comment the function itself loses shows in render's files.
		requireCommentsKept(t, original, rendered)
		require.Equal(t, snapshot, rendered, "rotate-certs render (run %d) must write what kpt fn render writes", i+1)
	}
}

func TestKptFnEvalExec(t *testing.T) {
	kpt := e2eharness.Tool(t, "kpt")
	dir := stageExample(t, "envoy-gateway")
	_, stderr, err := run(t, dir, kpt, "fn", "eval", ".", "--exec", "../../bin/rotate-certs", "--fn-config", "rotation-policy.yaml")
	require.NoError(t, err, stderr)
	want := []string{"example-ca-new", "example-ca-old"}
	require.Equal(t, want, bundleSubjects(t, readPackage(t, dir), exampleBundles[0].target, "ca.crt"))
}

// TestKymaRollbackIsOneLine flips the policy's mode to Copy: the same
// Secret then holds only the current CA; flipping back restores the overlap.
func TestKymaRollbackIsOneLine(t *testing.T) {
	dir := stageExample(t, "kyma-gateway")
	policyPath := filepath.Join(dir, "rotation-policy.yaml")
	policy, err := os.ReadFile(policyPath)
	require.NoError(t, err)
	copyMode := strings.Replace(string(policy), "mode: Bundle", "mode: Copy", 1)
	require.NotEqual(t, string(policy), copyMode)
	require.NoError(t, os.WriteFile(policyPath, []byte(copyMode), 0o644))
	_, stderr, err := run(t, dir, binary, "render", ".", "--policy", "rotation-policy.yaml")
	require.NoError(t, err, stderr)
	target := exampleBundles[1].target
	require.Equal(t, []string{"example-ca-new"}, bundleSubjects(t, readPackage(t, dir), target, "cacert"))
	require.Contains(t, stderr, "runtime-a-client-cert", "the clients of the old CA are on the re-issue list")

	// And back: Bundle mode restores the old CA Copy mode kept aside.
	require.NoError(t, os.WriteFile(policyPath, policy, 0o644))
	_, stderr, err = run(t, dir, binary, "render", ".", "--policy", "rotation-policy.yaml")
	require.NoError(t, err, stderr)
	require.Equal(t, exampleBundles[1].want, bundleSubjects(t, readPackage(t, dir), target, "cacert"))
}

func TestMultiSignerReRenderHasNoDiff(t *testing.T) {
	dir := stageExample(t, "multi-signer")
	before := e2eharness.Files(t, dir)
	_, stderr, err := run(t, dir, binary, "render", ".", "--policy", "rotation-policy.yaml")
	require.NoError(t, err, stderr)
	require.Equal(t, before, e2eharness.Files(t, dir), "an unchanged trust set must render to the same bytes")
}

func TestRenderFailureWritesNothing(t *testing.T) {
	dir := stageExample(t, "envoy-gateway")
	// Break the source: the render must fail, name the field, and leave
	// every file as it was.
	breakSourceCA(t, dir)
	requireRenderFails(t, dir, "Secret envoy-gateway-system/envoy-gateway data.ca.crt")
}

// requireFunctionFails runs function mode on the ResourceList input, whose
// items include a ConfigMap named keep: it must exit 1 with an error result
// and no item on stdout. It returns stderr.
func requireFunctionFails(t *testing.T, input string) (stderr string) {
	t.Helper()
	out, stderr, code := runIn(t, "", input)
	require.Equal(t, 1, code, "want exit 1; stderr: %s", stderr)
	require.NotContains(t, out, "name: keep", "no output resources on error")
	require.Contains(t, out, "severity: error")
	return stderr
}

func TestFunctionModeErrorExitAndNoOutput(t *testing.T) {
	input := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    trustBundles:
    - name: gw
      sources:
      - secret: {name: missing, namespace: ns}
      target: {name: trust}
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: keep, namespace: ns}
  data: {a: b}
`
	errOut := requireFunctionFails(t, input)
	require.Contains(t, errOut, "spec.trustBundles[0].sources[0]")
	require.Contains(t, errOut, "Secret ns/missing is not in the input")
}

func TestKustomizeShowsWarningsOnStderr(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	dir := stageExample(t, "envoy-gateway")
	// Without the committed trust Secret there is no previous state: the
	// render warns, and kustomize users must see it.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(
		"resources:\n- gateway-ca.yaml\n- ratelimit-client.yaml\ntransformers:\n- rotation-policy.yaml\n"), 0o644))
	_, stderr, err := run(t, dir, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
	require.NoError(t, err)
	require.Contains(t, stderr, "was not in the input and was created")
}

func readPackage(t *testing.T, dir string) []*yaml.RNode {
	t.Helper()
	items, err := (&kio.LocalPackageReader{PackagePath: dir, OmitReaderAnnotations: true}).Read()
	require.NoError(t, err)
	return items
}

// TestRenderWritesOnlyChangedFiles: render leaves alone every file whose
// resources the function did not change (blank lines and all), never reads
// hidden directories such as .github, and places a new resource where kpt fn
// render places it.
func TestRenderWritesOnlyChangedFiles(t *testing.T) {
	kpt := e2eharness.Tool(t, "kpt")
	const withAlerts = "spec:\n  alerts: {namespace: monitoring}\n"
	stage := func(t *testing.T) string {
		dir := stageExample(t, "envoy-gateway")
		policy := filepath.Join(dir, "rotation-policy.yaml")
		data, err := os.ReadFile(policy)
		require.NoError(t, err)
		require.Contains(t, string(data), "\nspec:\n")
		data = []byte(strings.Replace(string(data), "\nspec:\n", "\n"+withAlerts, 1))
		require.NoError(t, os.WriteFile(policy, data, 0o644))
		return dir
	}

	// The same package through kpt and through render: the same files.
	viaKpt := stage(t)
	_, stderr, err := run(t, viaKpt, kpt, "fn", "render", "--allow-exec", "--truncate-output=false")
	require.NoError(t, err, stderr)
	viaRender := stage(t)
	_, stderr, err = run(t, viaRender, binary, "render", ".", "--policy", "rotation-policy.yaml")
	require.NoError(t, err, stderr)
	require.Equal(t, e2eharness.Files(t, viaKpt), e2eharness.Files(t, viaRender))
	_, err = os.Stat(filepath.Join(viaRender, "prometheusrule_monitoring_rotate-certs-expiry.yaml"))
	require.NoError(t, err, "the new PrometheusRule belongs beside the policy")

	// Files render must not rewrite: a workflow in a hidden directory, a
	// YAML file that is not a Kubernetes resource, an unrelated resource
	// with blank lines and flow style.
	dir := stage(t)
	untouched := map[string]string{
		".github/workflows/render.yaml": "on:\n\n  push: {}\n\njobs: {}\n",
		"values.yaml":                   "# Helm values\nreplicas: 3\n\n\nimage: {tag: v1}\n",
		"unrelated.yaml":                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unrelated, namespace: default}\n\ndata:\n\n  a: b\n",
	}
	for name, content := range untouched {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	_, stderr, err = run(t, dir, binary, "render", ".", "--policy", "rotation-policy.yaml")
	require.NoError(t, err, stderr)
	for name, content := range untouched {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, content, string(data), "%s was rewritten", name)
	}
	require.Equal(t, e2eharness.Files(t, viaRender), withoutFiles(e2eharness.Files(t, dir), untouched))
}

func withoutFiles(snapshot map[string]string, files map[string]string) map[string]string {
	for name := range files {
		delete(snapshot, name)
	}
	return snapshot
}

// plantComments adds to the file of dir holding target the comments a
// user writes where a renderer is likeliest to lose them, beside the file's
// own head comment: a trailing comment on its kind and name, and a head and
// a trailing comment two levels deep (on a label of its own). (Not one
// closing the file: kpt fn render writes such a comment twice, even when
// the function only copies its input, and rotate-certs render once.)
func plantComments(t *testing.T, dir string, target kube.Key) {
	t.Helper()
	nameLine := "\n  name: " + target.Name + "\n"
	var path string
	for rel, text := range e2eharness.Files(t, dir) {
		if strings.HasSuffix(rel, ".yaml") && strings.Contains(text, nameLine) && strings.Contains(text, "\nkind: "+target.Kind+"\n") {
			require.Empty(t, path, "%s and %s both hold %s", path, rel, target)
			path = filepath.Join(dir, rel)
		}
	}
	require.NotEmpty(t, path, "no file of %s holds %s", dir, target)
	text := readFile(t, path)
	label := "    # planted: a head comment two levels deep\n" +
		"    rotate-certs.test/planted: \"yes\" # planted: a trailing comment two levels deep\n"
	if strings.Contains(text, "\n  labels:\n") {
		text = strings.Replace(text, "\n  labels:\n", "\n  labels:\n"+label, 1)
	} else {
		text = strings.Replace(text, nameLine, nameLine+"  labels:\n"+label, 1)
	}
	text = strings.Replace(text, nameLine, "\n  name: "+target.Name+" # planted: a trailing comment on the name\n", 1)
	text = strings.Replace(text, "\nkind: "+target.Kind+"\n", "\nkind: "+target.Kind+" # planted: a trailing comment on the kind\n", 1)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	require.Equal(t, 4, strings.Count(text, "# planted: "), "%s: every comment planted", path)
}

// requireCommentsKept fails unless every comment of every YAML file (and
// Kptfile) of before is still in that file after, as often: a comment may
// move with a change, never vanish.
func requireCommentsKept(t *testing.T, before, after map[string]string) {
	t.Helper()
	kept := 0
	for rel, text := range before {
		if !strings.HasSuffix(rel, ".yaml") && !strings.HasSuffix(rel, ".yml") && filepath.Base(rel) != "Kptfile" {
			continue
		}
		now := yamlComments(t, rel, after[rel])
		for c, n := range yamlComments(t, rel, text) {
			if now[c] < n {
				t.Errorf("%s: the comment %q (%d times before) is there %d times after the render", rel, c, n, now[c])
			}
			kept += n
		}
	}
	require.Positive(t, kept, "no comment in the package: nothing was checked")
}

// yamlComments counts the comment lines of every document of a YAML file,
// as the YAML parser attaches them (head, line and foot comments; a '#' in
// a string is no comment), each without its '#' and spacing.
func yamlComments(t *testing.T, name, text string) map[string]int {
	t.Helper()
	out := map[string]int{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
			for _, line := range strings.Split(c, "\n") {
				if line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#")); line != "" {
					out[line]++
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	dec := yaml.NewDecoder(strings.NewReader(text))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, "%s is not YAML", name)
		walk(&doc)
	}
}
