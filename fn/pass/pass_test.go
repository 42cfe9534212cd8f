package pass

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/policy"
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
		require.Equal(t, tc.want, namesDomain(Policy{Node: n}), tc.spec)
		// Decoded (Source.Lighten: its node a stub), the decoding says.
		if d, err := policy.Decode(n); err == nil {
			require.Equal(t, tc.want, namesDomain(Policy{Node: kube.Stub(n), Decoded: d}), tc.spec)
		}
	}
}

// TestLightenHoldsPoliciesDecoded: a split of a lightened source gives
// the packages a split of the same source gives, each policy decoded as
// Decode decodes it and explained alike, its node a stub that names it as
// its node did but holds no spec; a policy that does not decode keeps its
// node and its error, and Decode does not decode it again.
func TestLightenHoldsPoliciesDecoded(t *testing.T) {
	dir := t.TempDir()
	for name, example := range map[string]string{"gw": "envoy-gateway", "signers": "multi-signer", "mesh": "istio"} {
		require.NoError(t, os.CopyFS(filepath.Join(dir, name), os.DirFS(golden.Path("examples", example))))
	}
	bad := "apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n  name: bad\nspec:\n  trustBundles: {a: b}\n"
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bad"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad", "policy.yaml"), []byte(bad), 0o644))
	scan := func() []*Package {
		tree, err := resio.ScanTree(dir, layout.IsPolicy)
		require.NoError(t, err)
		return FromTree(tree).splitOnly(t)
	}
	want := scan()
	Decode(want)
	tree, err := resio.ScanTree(dir, layout.IsPolicy)
	require.NoError(t, err)
	src := FromTree(tree)
	src.Lighten()
	got := src.splitOnly(t)
	require.Len(t, got, len(want))
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	rows, errs := 0, 0
	for i, p := range got {
		require.Equal(t, want[i].Dir, p.Dir)
		require.Len(t, p.Policies, len(want[i].Policies))
		for j, pol := range p.Policies {
			w := want[i].Policies[j]
			require.Equal(t, kube.RefOf(w.Node), kube.RefOf(pol.Node))
			require.Equal(t, w.Decoded, pol.Decoded)
			require.Equal(t, w.Err, pol.Err)
			if pol.Err != nil {
				require.NotNil(t, kube.At(pol.Node, "spec"), "a policy that does not decode keeps its node")
				continue
			}
			require.Nil(t, kube.At(pol.Node, "spec"), "a stub")
		}
		before := p.Policies[0]
		Decode([]*Package{p})
		require.Same(t, before.Node, p.Policies[0].Node, "decoded once")
		r, err := p.Read()
		require.NoError(t, err)
		items := layout.WithoutPolicies(r.Items)
		es := p.Explain(items, now)
		require.Equal(t, explained(want[i].Explain(items, now)), explained(es), p.Dir)
		for _, e := range es {
			rows += len(e.Trust)
			if e.Err != nil {
				errs++
			}
		}
	}
	require.Positive(t, rows, "the examples' bundles explained")
	require.Equal(t, 1, errs, "the policy that does not decode")
}

// splitOnly is s's packages, its rest left out.
func (s *Source) splitOnly(t *testing.T) []*Package {
	t.Helper()
	pkgs, _ := s.Split()
	require.NotEmpty(t, pkgs)
	return pkgs
}

// explained is what Explain gave, without the policies' nodes.
func explained(es []Explained) []string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%v %+v %v", kube.RefOf(e.Node), e.Explanation, e.Err))
	}
	return out
}
