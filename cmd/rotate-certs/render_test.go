package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/stretchr/testify/require"
)

// TestRenderKustomizationFlag: `render DIR` on a package whose
// kustomization does not list the target's new file warns naming both and
// exits 0; `render DIR --kustomization` lists the file there and says it
// wrote the kustomization; the flag is in render's help.
func TestRenderKustomizationFlag(t *testing.T) {
	stage := func() string {
		dir := t.TempDir()
		require.NoError(t, os.CopyFS(dir, os.DirFS(golden.Path("examples", "envoy-gateway"))))
		require.NoError(t, os.Remove(filepath.Join(dir, "trust.yaml")))
		k := filepath.Join(dir, "kustomization.yaml")
		data, err := os.ReadFile(k)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(k, []byte(strings.Replace(string(data), "- trust.yaml\n", "", 1)), 0o644))
		return dir
	}
	created := "secret_envoy-gateway-system_envoy-gateway-trust.yaml"

	dir := stage()
	stdout, stderr, code := runCLI(t, "", "render", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "created "+filepath.Join(dir, created))
	require.Contains(t, stderr, "rotate-certs render: warning: "+filepath.Join(dir, "kustomization.yaml")+" does not list "+filepath.Join(dir, created)+" under resources")

	dir = stage()
	stdout, stderr, code = runCLI(t, "", "render", dir, "--kustomization")
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stderr, "warning: "+filepath.Join(dir, "kustomization.yaml"))
	require.Contains(t, stdout, "wrote "+filepath.Join(dir, "kustomization.yaml")+"\n")
	k, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(k), "- envoy.yaml\n- "+created+"\ntransformers:\n")

	help, _, code := runCLI(t, "", "render", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, help, "--kustomization")
}
