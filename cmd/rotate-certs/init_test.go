package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rotate-certs/rotate-certs/internal/golden"
)

// twoLinkerdClusters copies examples/linkerd, without its policy, into
// clusters/a and clusters/b of a new directory, and returns it.
func twoLinkerdClusters(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	src := golden.Path("examples", "linkerd")
	for _, c := range []string{"a", "b"} {
		require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == "rotation-policy.yaml" {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			dst := filepath.Join(top, "clusters", c, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			return os.WriteFile(dst, data, 0o644)
		}))
	}
	return top
}

// TestInitOverPackages runs init over a tree of two clusters: a policy per
// package, each proposing the domain of the anchor both share; on stdout
// one document each, named by its package; with -o NAME a file NAME in
// each package, wired in each package's kustomization; a path where a
// name is needed is a usage error that writes nothing.
func TestInitOverPackages(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code int
		// stdout and stderr hold these; files are written (relative to
		// the top) and hold the domain.
		stdout, stderr []string
		files          []string
	}{
		{name: "stdout", code: 0,
			stdout: []string{"# package $TOP/clusters/a: save as its rotation-policy.yaml", "---\n# package $TOP/clusters/b:", "domain: root.linkerd.cluster.local"}},
		{name: "a file in each package", args: []string{"-o", "rotation-policy.yaml", "--exec", "rotate-certs", "--kustomization", "kustomization.yaml"}, code: 0,
			stdout: []string{"wrote $TOP/clusters/a/rotation-policy.yaml", "wrote $TOP/clusters/b/rotation-policy.yaml"},
			files:  []string{"clusters/a/rotation-policy.yaml", "clusters/b/rotation-policy.yaml"}},
		{name: "an output path", args: []string{"-o", "$TOP/rotation-policy.yaml"}, code: 2,
			stderr: []string{"--output $TOP/rotation-policy.yaml: with several packages it names the file in each package's directory (a file name, such as rotation-policy.yaml): init found 2 packages ($TOP/clusters/a, $TOP/clusters/b)"}},
		{name: "a kustomization path", args: []string{"-o", "p.yaml", "--kustomization", "$TOP/clusters/a/kustomization.yaml"}, code: 2,
			stderr: []string{"--kustomization $TOP/clusters/a/kustomization.yaml: with several packages"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			top := twoLinkerdClusters(t)
			args := []string{"init", top, "--now", checkNow}
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "$TOP", top))
			}
			stdout, stderr, code := runCLI(t, "", args...)
			require.Equal(t, c.code, code, "stderr:\n%s", stderr)
			for _, s := range c.stdout {
				require.Contains(t, stdout, strings.ReplaceAll(s, "$TOP", top))
			}
			for _, s := range c.stderr {
				require.Contains(t, stderr, strings.ReplaceAll(s, "$TOP", top))
			}
			for _, f := range c.files {
				data, err := os.ReadFile(filepath.Join(top, filepath.FromSlash(f)))
				require.NoError(t, err)
				require.Contains(t, string(data), "domain: root.linkerd.cluster.local")
			}
			if code != 0 {
				_, err := os.Stat(filepath.Join(top, "clusters", "a", "rotation-policy.yaml"))
				require.True(t, os.IsNotExist(err), "nothing is written")
			}
		})
	}
}
