package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The restart half of examples/envoy-gateway: the rate-limit server reads
// the bundle through a subPath mount and must roll; the Envoy proxy mounts
// the whole Secret, is annotated hot and must not.

var (
	ratelimitKey = kube.Key{Kind: "Deployment", Namespace: "envoy-gateway-system", Name: "envoy-ratelimit"}
	envoyKey     = kube.Key{Kind: "Deployment", Namespace: "envoy-gateway-system", Name: "envoy-default-eg"}
)

// templateTrustHash returns the pod template's trust-hash of the workload
// k in items, "" when it has none.
func templateTrustHash(t *testing.T, items []*yaml.RNode, k kube.Key) string {
	t.Helper()
	for _, it := range items {
		if kube.KeyOf(it) != k {
			continue
		}
		v, err := it.Pipe(yaml.Lookup("spec", "template", "metadata", "annotations", restart.TrustHashAnnotation))
		require.NoError(t, err)
		if v == nil {
			return ""
		}
		return v.YNode().Value
	}
	t.Fatalf("%s not in output", k)
	return ""
}

func TestKustomizeExampleRestarts(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	dir := stageExample(t, "envoy-gateway")
	out, _ := kustomizeBuild(t, kustomize, dir)
	items := parseStream(t, out)
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, templateTrustHash(t, items, ratelimitKey), "the subPath consumer must roll")
	require.Empty(t, templateTrustHash(t, items, envoyKey), "the hot Envoy must not roll")
}

func TestKptRenderExampleRestarts(t *testing.T) {
	kpt := e2eharness.Tool(t, "kpt")
	dir := stageExample(t, "envoy-gateway")
	envoyBefore, err := os.ReadFile(filepath.Join(dir, "envoy.yaml"))
	require.NoError(t, err)

	kptRender(t, kpt, dir)
	items := readPackage(t, dir)
	hash := templateTrustHash(t, items, ratelimitKey)
	require.Regexp(t, `^sha256:[0-9a-f]{64}$`, hash)
	require.Empty(t, templateTrustHash(t, items, envoyKey))

	// The rotation touches the bundle and the rolled workload, nothing else.
	changed, _, err := run(t, dir, "git", "diff", "--name-only")
	require.NoError(t, err)
	files := strings.Fields(changed)
	sort.Strings(files)
	require.Equal(t, []string{"ratelimit.yaml", "trust.yaml"}, files)
	envoyAfter, err := os.ReadFile(filepath.Join(dir, "envoy.yaml"))
	require.NoError(t, err)
	require.Equal(t, string(envoyBefore), string(envoyAfter))

	// In the rolled workload, only the annotation was added: every other
	// line, comments included, is as it was.
	diff, _, err := run(t, dir, "git", "diff", "-U0", "--", "ratelimit.yaml")
	require.NoError(t, err)
	var added, removed []string
	for _, line := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
		case strings.HasPrefix(line, "+"):
			added = append(added, strings.TrimSpace(line[1:]))
		case strings.HasPrefix(line, "-"):
			removed = append(removed, line)
		}
	}
	require.Empty(t, removed)
	require.Equal(t, []string{"annotations:", restart.TrustHashAnnotation + ": '" + hash + "'"}, added)

	// Commit and render twice more: no byte changes, so no sync and no
	// restart.
	gitCommitAll(t, dir, nil, "rendered")
	snapshot := e2eharness.Files(t, dir)
	for i := 0; i < 2; i++ {
		_, stderr, err := run(t, dir, kpt, "fn", "render", "--allow-exec")
		require.NoError(t, err, stderr)
		require.Equal(t, snapshot, e2eharness.Files(t, dir), "re-render %d must change nothing", i+1)
	}
}
