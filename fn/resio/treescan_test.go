package resio

import (
	"path"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/atomicfs"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestTreeReadIsReadTree reads the examples (packages, lists, comments,
// indented sequences, templates skipped with a note) with ScanTree and,
// one top directory at a time, with Tree.Read, and with ReadTree once:
// the notes and the files are ReadTree's, the kept resources are those
// keep chose, and each part's resources and the files WriteFiles writes
// after the same change to them are what ReadTree's give for that part.
func TestTreeReadIsReadTree(t *testing.T) {
	dir := golden.Path("examples")
	isPolicy := func(n *yaml.RNode) bool { return n.GetKind() == "RotationPolicy" }
	whole, err := ReadTree(dir)
	require.NoError(t, err)
	tree, err := ScanTree(dir, isPolicy)
	require.NoError(t, err)
	require.Equal(t, whole.Notes, tree.Notes)
	var kept []*yaml.RNode
	for _, it := range whole.Items {
		if isPolicy(it) {
			kept = append(kept, it)
		}
	}
	require.NotEmpty(t, kept)
	require.Equal(t, golden.Encode(t, kept), golden.Encode(t, tree.Kept))

	parts := map[string][]string{} // files by top directory
	for _, f := range tree.Files {
		top, _, _ := strings.Cut(f.Path, "/")
		parts[top] = append(parts[top], f.Path)
	}
	require.Greater(t, len(parts), 5)
	for top, files := range parts {
		t.Run(top, func(t *testing.T) {
			part, err := tree.Read(files)
			require.NoError(t, err)
			var want []*yaml.RNode
			for _, it := range whole.Items {
				if strings.HasPrefix(filePath(it), top+"/") || filePath(it) == top {
					want = append(want, it)
				}
			}
			require.Equal(t, golden.Encode(t, want), golden.Encode(t, part.Items))
			require.Equal(t, writeChanged(t, whole, want), writeChanged(t, part, part.Items))
		})
	}
}

// writeChanged annotates every other item of out - r's own items, changed
// in place as the function changes them (r knows its items by node) -
// adds one resource to the directory of the first, and returns the files
// r.WriteFiles writes, by path.
func writeChanged(t *testing.T, r *Resources, out []*yaml.RNode) map[string]string {
	t.Helper()
	for i, it := range out {
		if i%2 == 0 {
			require.NoError(t, it.PipeE(yaml.SetAnnotation("example.com/touched", "yes")))
		}
	}
	if len(out) > 0 {
		added := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added\n")
		require.NoError(t, added.PipeE(yaml.SetAnnotation("internal.config.kubernetes.io/path", path.Join(path.Dir(filePath(out[0])), "added.yaml"))))
		out = append(out, added)
	}
	files, err := r.WriteFiles(out)
	require.NoError(t, err)
	return byPath(files)
}

func byPath(files []atomicfs.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		out[f.Path] = string(f.Data)
	}
	return out
}

// TestTreeReleasedIsNotRead: once Release lets a file's text go, Read of
// it fails, naming it, rather than read an empty file; other files still
// read.
func TestTreeReleasedIsNotRead(t *testing.T) {
	tree, err := ScanTree(golden.Path("examples", "envoy-gateway"), func(*yaml.RNode) bool { return false })
	require.NoError(t, err)
	require.Greater(t, len(tree.Files), 1)
	first, second := tree.Files[0].Path, tree.Files[1].Path
	tree.Release([]string{first})
	_, err = tree.Read([]string{first})
	require.ErrorContains(t, err, first)
	part, err := tree.Read([]string{second})
	require.NoError(t, err)
	require.Len(t, part.Items, tree.Files[1].Resources)
}
