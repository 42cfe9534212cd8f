package layout

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func item(t *testing.T, kind, name, file string) *yaml.RNode {
	t.Helper()
	apiVersion := "v1"
	if kind == "RotationPolicy" {
		apiVersion = "rotate-certs.dev/v1alpha1"
	}
	n, err := yaml.Parse("apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n")
	require.NoError(t, err)
	if file != "" {
		require.NoError(t, n.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, file)))
	}
	return n
}

func names(items []*yaml.RNode) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.GetName())
	}
	return out
}

// TestSplit: a policy scopes its directory and below; a deeper policy's
// directory is its own package, out of the outer one; objects of the same
// name in two packages stay apart; what no policy covers is the rest.
func TestSplit(t *testing.T) {
	items := []*yaml.RNode{
		item(t, "Secret", "ca", "clusters/prod/ca.yaml"),
		item(t, "Secret", "ca", "clusters/staging/ca.yaml"),
		item(t, "RotationPolicy", "staging", "clusters/staging/policy.yaml"),
		item(t, "RotationPolicy", "prod", "clusters/prod/policy.yaml"),
		item(t, "Secret", "deep", "clusters/prod/apps/x/deep.yaml"),
		item(t, "RotationPolicy", "edge", "clusters/prod/edge/policy.yaml"),
		item(t, "Secret", "edge-ca", "clusters/prod/edge/ca.yaml"),
		item(t, "ConfigMap", "loose", "infra/loose.yaml"),
		item(t, "ConfigMap", "stdin", ""),
		item(t, "RotationPolicy", "on-stdin", ""),
	}
	pkgs, rest := Split(items, IsPolicy, nil)
	require.Len(t, pkgs, 3)
	require.Equal(t, "clusters/prod", pkgs[0].Dir)
	require.Equal(t, []string{"ca", "prod", "deep"}, names(pkgs[0].Items), "the edge package is left out of prod")
	require.Equal(t, "clusters/prod/edge", pkgs[1].Dir)
	require.Equal(t, []string{"edge", "edge-ca"}, names(pkgs[1].Items))
	require.Equal(t, "clusters/staging", pkgs[2].Dir)
	require.Equal(t, []string{"ca", "staging"}, names(pkgs[2].Items))
	require.Equal(t, []string{"loose", "stdin", "on-stdin"}, names(rest))

	pol, err := pkgs[0].OnePolicy()
	require.NoError(t, err)
	require.Equal(t, "prod", pol.GetName())
}

// TestSplitTopAndRelativePaths: a policy at the top is package "." and
// covers everything without a deeper policy; paths that climb out of the
// working directory work the same.
func TestSplitTopAndRelativePaths(t *testing.T) {
	pkgs, rest := Split([]*yaml.RNode{
		item(t, "RotationPolicy", "top", "policy.yaml"),
		item(t, "Secret", "a", "a.yaml"),
		item(t, "Secret", "b", "x/y/b.yaml"),
	}, IsPolicy, nil)
	require.Empty(t, rest)
	require.Len(t, pkgs, 1)
	require.Equal(t, ".", pkgs[0].Dir)
	require.Equal(t, []string{"top", "a", "b"}, names(pkgs[0].Items))

	pkgs, rest = Split([]*yaml.RNode{
		item(t, "RotationPolicy", "p", "../../examples/e/policy.yaml"),
		item(t, "Secret", "in", "../../examples/e/s.yaml"),
		item(t, "Secret", "out", "../../examples/s.yaml"),
	}, IsPolicy, nil)
	require.Len(t, pkgs, 1)
	require.Equal(t, []string{"p", "in"}, names(pkgs[0].Items))
	require.Equal(t, []string{"out"}, names(rest))
}

// TestOnePolicy: two policies in one directory are an error naming both
// files.
func TestOnePolicy(t *testing.T) {
	pkgs, _ := Split([]*yaml.RNode{
		item(t, "RotationPolicy", "a", "prod/a.yaml"),
		item(t, "RotationPolicy", "b", "prod/b.yaml"),
	}, IsPolicy, nil)
	require.Len(t, pkgs, 1)
	_, err := pkgs[0].OnePolicy()
	require.EqualError(t, err, "package prod holds 2 RotationPolicies: a (prod/a.yaml), b (prod/b.yaml); a package has one policy - merge their bundles into one, or move one into a directory of its own")
}

func TestIsPolicy(t *testing.T) {
	require.True(t, IsPolicy(item(t, "RotationPolicy", "p", "")))
	other, err := yaml.Parse("apiVersion: rotate-certs.dev/v1\nkind: RotationPolicy\nmetadata: {name: p}\n")
	require.NoError(t, err)
	require.False(t, IsPolicy(other), "another apiVersion is not this policy")
}
