package pass

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// split is what a split gave, as text: each package's directory, policies
// and resources (read back), then the rest's.
func split(t *testing.T, src *Source) []string {
	t.Helper()
	pkgs, rest := src.Split()
	var out []string
	for _, p := range append(pkgs, rest) {
		var pols []string
		for _, pol := range p.Policies {
			pols = append(pols, pol.Node.GetName())
		}
		r, err := p.Read()
		require.NoError(t, err)
		out = append(out, p.Dir+" "+strings.Join(pols, ",")+"\n"+golden.Encode(t, append(r.Items, r.FunctionConfigs...)))
	}
	return out
}

// TestTreeSplitIsItemSplit: a tree read as text and split by file (check's
// and render's reading) gives the packages, policies and resources a split
// of every resource parsed gives (diff's), also where a file's resources
// name files of other packages (a ResourceList that kpt wrote) and for
// resources from stdin.
func TestTreeSplitIsItemSplit(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "gw"), os.DirFS(golden.Path("examples", "envoy-gateway"))))
	require.NoError(t, os.CopyFS(filepath.Join(dir, "mesh"), os.DirFS(golden.Path("examples", "istio"))))
	list := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: into-gw
    annotations:
      internal.config.kubernetes.io/path: ` + filepath.ToSlash(filepath.Join(dir, "gw", "x.yaml")) + `
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: own
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "list.yaml"), []byte(list), 0o644))
	stdin := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: piped\n"
	paths := []string{dir, "-"}
	items := resio.ReadPaths(paths, strings.NewReader(stdin))
	want := split(t, FromItems(append(items.Items, items.FunctionConfigs...)))
	require.Len(t, want, 3, "two packages and the rest")
	tree := resio.ScanPaths(paths, strings.NewReader(stdin), layout.IsPolicy)
	require.Equal(t, want, split(t, FromTree(tree)))
}

// TestEachLetsGo: Each hands every package to do once, in package order
// to done, and lets each package's text and policies go when do returns.
func TestEachLetsGo(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []struct{ path, text string }{
		{"a/policy.yaml", "apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n  name: a\n"},
		{"a/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"},
		{"b/policy.yaml", "apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n  name: b\n"},
	} {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(f.text), 0o644))
	}
	tree, err := resio.ScanTree(dir, layout.IsPolicy)
	require.NoError(t, err)
	pkgs, _ := FromTree(tree).Split()
	require.Len(t, pkgs, 2)
	var calls atomic.Int32
	var order []string
	Each(pkgs, 2, func(p *Package, r *resio.Resources, err error) string {
		calls.Add(1)
		require.NoError(t, err)
		return p.Dir + ":" + strings.Join(names(r.Items), ",")
	}, func(i int, s string) { order = append(order, s) })
	require.Equal(t, int32(2), calls.Load())
	require.Equal(t, []string{"a:cm,a", "b:b"}, order)
	_, err = tree.Read([]string{"a/cm.yaml"})
	require.Error(t, err, "released")
	require.Nil(t, pkgs[0].Policies, "let go")
}

func names(items []*yaml.RNode) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.GetName())
	}
	return out
}

// TestNamesDomain: the domains' pre-pass decodes a policy only when a
// bundle may name a domain - its own key, or one a merge key may bring.
func TestNamesDomain(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want bool
	}{
		{"spec:\n  trustBundles:\n  - name: a\n    domain: mesh\n", true},
		{"spec:\n  trustBundles:\n  - name: a\n  - name: b\n", false},
		{"spec:\n  trustBundles:\n  - <<: {domain: mesh}\n    name: a\n", true},
		{"spec:\n  trustBundles: {a: b}\n", true},
		{"spec: {}\n", false},
	} {
		n, err := yaml.Parse("apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n  name: p\n" + tc.spec)
		require.NoError(t, err)
		require.Equal(t, tc.want, namesDomain(n), tc.spec)
	}
}
