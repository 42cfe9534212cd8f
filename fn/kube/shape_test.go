package kube

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestCheckShape(t *testing.T) {
	tests := []struct {
		name, doc, prefix string
		field, msg        string // field "" and msg "" mean valid
	}{
		{name: "plain object", doc: "apiVersion: v1\nkind: Secret\nmetadata: {name: a, labels: {x: y}, annotations: {k: v}}\n"},
		{name: "no metadata", doc: "kind: Secret\n"},
		{name: "null metadata and maps", doc: "kind: Secret\nmetadata: {labels: null, annotations: ~}\n"},
		{name: "empty metadata", doc: "kind: Secret\nmetadata:\n"},
		{name: "aliased annotations", doc: "kind: Secret\nmetadata: {labels: &l {a: b}, annotations: *l}\n"},
		{name: "list item", doc: "[{}]", field: "", msg: "is a YAML list, not an object"},
		{name: "scalar item", doc: "x", field: "", msg: "is a YAML scalar, not an object"},
		{name: "metadata list", doc: "kind: Secret\nmetadata: [1]\n", field: "metadata", msg: "is a YAML list, not an object"},
		{name: "metadata scalar", doc: "kind: Secret\nmetadata: x\n", field: "metadata", msg: "is a YAML scalar"},
		{name: "labels list", doc: "kind: Secret\nmetadata: {labels: [x]}\n", field: "metadata.labels", msg: "is a YAML list, not a map of strings"},
		{name: "annotations scalar", doc: "kind: Secret\nmetadata: {annotations: x}\n", field: "metadata.annotations", msg: "is a YAML scalar"},
		{name: "prefixed", doc: "metadata: {labels: [x]}\n", prefix: "spec.template", field: "spec.template.metadata.labels", msg: "list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node, err := yaml.Parse(tt.doc)
			require.NoError(t, err)
			err = CheckShape(node, tt.prefix)
			if tt.msg == "" {
				require.NoError(t, err)
				// What passes must be safe for kyaml's accessors.
				_ = KeyOf(node)
				_ = RefOf(node)
				_ = IsLocalConfig(node)
				_ = node.GetLabels()
				return
			}
			require.Error(t, err)
			require.Equal(t, tt.field, FieldOf(err))
			require.Contains(t, err.Error(), tt.msg)
		})
	}
}

// RefOf, KeyOf, FileOf and IsLocalConfig name a resource in every message,
// also in the message that says its metadata cannot be read: they must not
// panic on any shape (kyaml's accessors index a list as a map), and give
// what can be read.
func TestRefOfReadsWhatItCan(t *testing.T) {
	tests := []struct {
		doc  string
		want Ref
	}{
		{"[a]", Ref{}},
		{"[a, b, c]", Ref{}},
		{"x", Ref{}},
		{"apiVersion: v1\nkind: Secret\nmetadata: [a]\n", Ref{APIVersion: "v1", Kind: "Secret"}},
		{"apiVersion: v1\nkind: Secret\nmetadata: [name, x, namespace]\n", Ref{APIVersion: "v1", Kind: "Secret"}},
		{"apiVersion: v1\nkind: Secret\nmetadata: {name: a, namespace: n, annotations: [x]}\n", Ref{APIVersion: "v1", Kind: "Secret", Namespace: "n", Name: "a"}},
		{"apiVersion: v1\nkind: Secret\nmetadata: {name: a, labels: [x, y, z], annotations: {config.kubernetes.io/path: f.yaml}}\n", Ref{APIVersion: "v1", Kind: "Secret", Name: "a"}},
		{"apiVersion: v1\nkind: Secret\nmetadata: {name: a, annotations: {config.kubernetes.io/path: f.yaml, config.kubernetes.io/index: '2'}}\n", Ref{APIVersion: "v1", Kind: "Secret", Name: "a", Path: "f.yaml", Index: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			node, err := yaml.Parse(tt.doc)
			require.NoError(t, err)
			require.Equal(t, tt.want, RefOf(node))
			require.Equal(t, Key{Kind: tt.want.Kind, Namespace: tt.want.Namespace, Name: tt.want.Name}, KeyOf(node))
			path, index := FileOf(node)
			require.Equal(t, tt.want.Path, path)
			require.Equal(t, tt.want.Index, index)
			require.False(t, IsLocalConfig(node))
		})
	}
}
