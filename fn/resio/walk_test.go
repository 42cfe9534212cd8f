package resio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func write(t *testing.T, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

func rels(t *testing.T, root string, files []string) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		r, err := filepath.Rel(root, f)
		require.NoError(t, err)
		out = append(out, filepath.ToSlash(r))
	}
	return out
}

// TestDirRules: hidden files and directories are skipped, a .krmignore
// applies to its directory and below (the top's and a deeper one's), only
// the extensions asked for are read, and a linked directory is not
// entered while a linked file is read.
func TestDirRules(t *testing.T) {
	require.False(t, strings.Contains(ignoreFile, "/"), "the ignore file is a name, not a path")
	root := t.TempDir()
	for _, rel := range []string{
		"a.yaml", "b.yml", "c.json", "notes.txt", ".hidden.yaml", ".git/x.yaml", "pkg/.expected/y.yaml",
		"pkg/keep.yaml", "pkg/kustomization.yaml", "pkg/templates/t.yaml", "pkg/sub/kustomization.yaml",
		"other/kustomization.yaml", "other/z.YAML",
	} {
		write(t, root, rel, "kind: ConfigMap\n")
	}
	write(t, root, ".krmignore", "# the top's rules\nb.yml\n")
	write(t, root, "pkg/.krmignore", "kustomization.yaml\ntemplates/\n")
	require.NoError(t, os.Symlink(filepath.Join(root, "pkg"), filepath.Join(root, "linked-dir")))
	require.NoError(t, os.Symlink(filepath.Join(root, "a.yaml"), filepath.Join(root, "linked.yaml")))

	res := Walk(root, Manifests)
	require.Empty(t, res.Problems)
	require.Equal(t, []string{"a.yaml", "linked.yaml", "other/kustomization.yaml", "other/z.YAML", "pkg/keep.yaml"}, rels(t, root, res.Files),
		"pkg's .krmignore covers pkg/sub too, not other/; extensions match without regard to case")

	res = Walk(root, manifestsAndJSON)
	require.Contains(t, rels(t, root, res.Files), "c.json")

	// Walked from pkg, the top's .krmignore is above the walk and does not
	// count; pkg's own does.
	res = Walk(filepath.Join(root, "pkg"), Manifests)
	require.Equal(t, []string{"keep.yaml"}, rels(t, filepath.Join(root, "pkg"), res.Files))
}

// TestPathNamedFile: a file named on the command line is read whatever
// the walk rules say; a missing path is a problem.
func TestPathNamedFile(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".hidden.yaml", "kind: ConfigMap\n")
	res := walkPath(osFiles{}, filepath.Join(root, ".hidden.yaml"), Manifests)
	require.Empty(t, res.Problems)
	require.Len(t, res.Files, 1)

	res = walkPath(osFiles{}, filepath.Join(root, "missing"), Manifests)
	require.Empty(t, res.Files)
	require.Len(t, res.Problems, 1)
	require.Contains(t, res.Problems[0].Error(), "missing")
}

// TestAbsPathsIsFilepathAbs: the working directory read once gives what
// filepath.Abs gives for every path, and a walk from a relative root
// applies the .krmignore files as one from the absolute root does.
func TestAbsPathsIsFilepathAbs(t *testing.T) {
	root := t.TempDir()
	write(t, root, "pkg/keep.yaml", "kind: ConfigMap\n")
	write(t, root, "pkg/skip.yaml", "kind: ConfigMap\n")
	write(t, root, "pkg/.krmignore", "skip.yaml\n")
	t.Chdir(filepath.Join(root, "pkg"))
	var abs absPaths
	for _, p := range []string{".", "..", "a.yaml", "./a/../b.yaml", "../pkg//c.yaml", "/x/../y.yaml", "/", "a/./b/"} {
		want, err := filepath.Abs(p)
		require.NoError(t, err)
		got, err := abs.of(p)
		require.NoError(t, err)
		require.Equal(t, want, got, p)
	}
	for _, from := range []string{".", "../pkg", filepath.Join(root, "pkg")} {
		res := Walk(from, Manifests)
		require.Empty(t, res.Problems)
		require.Equal(t, []string{"keep.yaml"}, rels(t, from, res.Files), from)
	}
}
