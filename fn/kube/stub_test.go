package kube

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestStubNamesAsItsNode: RefOf and FileOf read of a stub what they read
// of its node, for every shape they read (the legacy annotations, an
// empty current one, duplicate keys, no metadata, a bad shape); the stub
// of a node readable as a map shares no node with it and holds neither
// its spec nor its data nor the annotations no reader of names asks for.
func TestStubNamesAsItsNode(t *testing.T) {
	for _, text := range []string{
		"apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n  name: p\n  namespace: ns\n  labels: {a: b}\n  annotations:\n    config.kubernetes.io/function: |\n      exec: {path: x}\n    internal.config.kubernetes.io/path: a/p.yaml\n    internal.config.kubernetes.io/index: '2'\n    config.kubernetes.io/path: a/p.yaml\nspec:\n  trustBundles: [{name: b}]\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/path: legacy.yaml\n    config.kubernetes.io/index: '3'\ndata: {x: y}\n",
		"kind: ConfigMap\nmetadata:\n  annotations:\n    internal.config.kubernetes.io/path: ''\n    config.kubernetes.io/path: legacy.yaml\n",
		"kind: ConfigMap\nmetadata:\n  annotations:\n    internal.config.kubernetes.io/path: a.yaml\n  annotations:\n    internal.config.kubernetes.io/path: b.yaml\n",
		"kind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
		"kind: ConfigMap\nmetadata: null\n",
		"kind: ConfigMap\n",
		"kind: ConfigMap\nmetadata: [a]\n",
		"kind: ConfigMap\nmetadata:\n  name: a\n  annotations: [x]\n",
		"base: &m {name: a}\nkind: ConfigMap\nmetadata: *m\n",
		"[a, b]\n",
	} {
		node, err := yaml.Parse(text)
		require.NoError(t, err, text)
		stub := Stub(node)
		require.Equal(t, RefOf(node), RefOf(stub), text)
		path, index := FileOf(node)
		stubPath, stubIndex := FileOf(stub)
		require.Equal(t, []any{path, index}, []any{stubPath, stubIndex}, text)
		if stub == node {
			continue
		}
		own := map[*yaml.Node]bool{}
		walk(node.YNode(), func(n *yaml.Node) { own[n] = true })
		walk(stub.YNode(), func(n *yaml.Node) { require.False(t, own[n], "stub shares a node of %q", text) })
		keys := func(n *yaml.Node) []string {
			var out []string
			for i := 0; n != nil && i+1 < len(n.Content); i += 2 {
				out = append(out, n.Content[i].Value)
			}
			return out
		}
		top := stub.YNode()
		require.Subset(t, []string{"apiVersion", "kind", "metadata"}, keys(top), text)
		require.Subset(t, []string{"name", "namespace", "annotations"}, keys(MapValue(top, "metadata")), text)
		require.Subset(t, []string{kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation},
			keys(MapValue(MapValue(top, "metadata"), "annotations")), text)
	}
}

func walk(n *yaml.Node, f func(*yaml.Node)) {
	f(n)
	for _, c := range n.Content {
		walk(c, f)
	}
}
