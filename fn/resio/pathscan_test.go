package resio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestScanPathsReadIsReadPaths: what ScanPaths keeps and what Read parses
// of its files again are what ReadPaths reads - over the examples, a
// directory with a ResourceList whose items name files of their own and a
// policy as its functionConfig, a file that does not parse, and stdin.
func TestScanPathsReadIsReadPaths(t *testing.T) {
	isPolicy := func(n *yaml.RNode) bool { return n.GetKind() == "RotationPolicy" }
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("list.yaml", `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
    annotations:
      internal.config.kubernetes.io/path: clusters/a/cm.yaml
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: b
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata:
    name: p
`)
	write("bad.yaml", "a: [\n")
	write("dup.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n  name: e\n")
	write("empty.yaml", "# nothing\n")
	stdin := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n---\napiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n  name: q\n"
	for _, paths := range [][]string{{golden.Path("examples")}, {dir, "-"}} {
		whole := ReadPaths(paths, strings.NewReader(stdin))
		tree := ScanPaths(paths, strings.NewReader(stdin), isPolicy)
		require.Equal(t, whole.Notes, tree.Notes)
		var kept []*yaml.RNode
		for _, it := range append(append([]*yaml.RNode(nil), whole.Items...), whole.FunctionConfigs...) {
			if isPolicy(it) {
				kept = append(kept, it)
			}
		}
		require.NotEmpty(t, kept)
		require.Equal(t, golden.Encode(t, kept), golden.Encode(t, tree.Kept))
		var files []string
		for _, f := range tree.Files {
			files = append(files, f.Path)
		}
		part, err := tree.Read(files)
		require.NoError(t, err)
		require.Equal(t, whole.Problems, tree.InOrder(part.Problems), "the problems of the files the scan parsed and those Read parsed, in order")
		require.Equal(t, golden.Encode(t, whole.Items), golden.Encode(t, part.Items))
		require.Equal(t, golden.Encode(t, whole.FunctionConfigs), golden.Encode(t, part.FunctionConfigs))
	}
	tree := ScanPaths([]string{dir}, nil, isPolicy)
	var names [][]string
	for _, f := range tree.Files {
		names = append(names, f.Names)
	}
	require.Equal(t, [][]string{nil, nil, nil, {"clusters/a/cm.yaml", filepath.ToSlash(filepath.Join(dir, "list.yaml"))}}, names,
		"a file's resources may name files of their own, one without a path its file; a file the scan did not parse (bad, dup, empty) names only itself")
}

// TestScanBuiltReadIsReadBuilt: ScanBuilt holds what a directory's
// kustomizations build and the text of the directories without one, and
// Read gives back what ReadBuilt reads - over the examples (each a
// kustomization) and a directory of plain files named beside them.
func TestScanBuiltReadIsReadBuilt(t *testing.T) {
	isPolicy := func(n *yaml.RNode) bool { return n.GetKind() == "RotationPolicy" }
	plain := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(plain, "p.yaml"), []byte("apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n  name: p\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"), 0o644))
	paths := []string{golden.Path("examples", "envoy-gateway"), golden.Path("examples", "multi-signer"), plain}
	whole := ReadBuilt(paths, nil)
	tree := ScanBuilt(paths, nil, isPolicy)
	require.Equal(t, whole.Notes, tree.Notes)
	var kept []*yaml.RNode
	for _, it := range append(append([]*yaml.RNode(nil), whole.Items...), whole.FunctionConfigs...) {
		if isPolicy(it) {
			kept = append(kept, it)
		}
	}
	require.Len(t, kept, 3, "each build's policy and the plain file's")
	require.Equal(t, golden.Encode(t, kept), golden.Encode(t, tree.Kept))
	var files []string
	for _, f := range tree.Files {
		files = append(files, f.Path)
	}
	part, err := tree.Read(files)
	require.NoError(t, err)
	require.Equal(t, whole.Problems, tree.InOrder(part.Problems))
	require.Equal(t, golden.Encode(t, whole.Items), golden.Encode(t, part.Items))
}
