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

// unlistedTarget stages examples/envoy-gateway as a repository that
// renders in CI and applies `kustomize build` (no transformers: the
// rendered files are what kustomize reads) and has never rendered its
// target: trust.yaml is gone, and so is its kustomization entry.
func unlistedTarget(t *testing.T) string {
	t.Helper()
	dir := stageExample(t, "envoy-gateway")
	require.NoError(t, os.Remove(filepath.Join(dir, "trust.yaml")))
	k := filepath.Join(dir, "kustomization.yaml")
	editFile(t, k, "- trust.yaml\n", "")
	data, err := os.ReadFile(k)
	require.NoError(t, err)
	text, _, found := strings.Cut(string(data), "transformers:")
	require.True(t, found)
	require.NoError(t, os.WriteFile(k, []byte(text), 0o644))
	return dir
}

// TestRenderKustomizationWithKustomize: the real kustomize leaves a target
// that render created out of `kustomize build` when the kustomization does
// not list its file - and render said so, naming both; after `render
// --kustomization` the build holds the target.
func TestRenderKustomizationWithKustomize(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	const target = "secret_envoy-gateway-system_envoy-gateway-trust.yaml"

	dir := unlistedTarget(t)
	_, stderr, code := runIn(t, dir, "", "render", ".")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "rotate-certs render: warning: kustomization.yaml does not list "+target+" under resources: kustomize build would leave this new target out")
	out, stderr, err := run(t, dir, kustomize, "build", ".")
	require.NoError(t, err, stderr)
	for _, it := range parseStream(t, out) {
		require.False(t, it.GetKind() == "Secret" && it.GetName() == "envoy-gateway-trust", "kustomize builds without the unlisted target")
	}
	require.Contains(t, out, "secretName: envoy-gateway-trust", "while the workloads mount it")

	dir = unlistedTarget(t)
	stdout, stderr, code := runIn(t, dir, "", "render", ".", "--kustomization")
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stderr, "warning: kustomization.yaml")
	require.Contains(t, stdout, "wrote kustomization.yaml\n")
	out, stderr, err = run(t, dir, kustomize, "build", ".")
	require.NoError(t, err, stderr)
	cns := bundleSubjects(t, parseStream(t, out), kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}, "ca.crt")
	require.Contains(t, cns, "example-ca-new", "kustomize build holds the rendered target")
}
