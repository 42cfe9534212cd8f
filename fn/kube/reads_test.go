package kube

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A union reads what any declaration reads: a kind read whole by one is
// read whole, whatever the rules of others; a kind read in part is read
// where a rule (or EveryKind) says so, and wherever its metadata cannot be
// read by a rule.
func TestUnion(t *testing.T) {
	named := func(name string) func(*yaml.RNode) bool {
		return func(item *yaml.RNode) bool { return item.GetName() == name }
	}
	secrets := Reads{Some: []ItemRule{{GroupKind: GroupKind{Kind: "Secret"}, Selects: named("a")}}}
	plan := Union(
		secrets,
		Reads{Some: []ItemRule{{GroupKind: GroupKind{Kind: "Secret"}, Selects: named("b")}, {GroupKind: GroupKind{Kind: "ConfigTemplate"}, Selects: named("a")}}},
		Reads{Kinds: []GroupKind{{Group: "apps", Kind: "Deployment"}}, Groups: []string{"rotate-certs.dev"},
			GroupSuffixes: []string{"cluster.x-k8s.io"}, KindSuffixes: []string{"Template"}},
		Reads{EveryKind: named("c")},
	)
	tests := []struct {
		name, doc string
		want      bool
	}{
		{"a kind read whole", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n", true},
		{"the same kind in another group", "apiVersion: example.com/v1\nkind: Deployment\nmetadata: {name: x}\n", false},
		{"a group read whole", "apiVersion: rotate-certs.dev/v1alpha1\nkind: Anything\nmetadata: {name: x}\n", true},
		{"a group by its suffix", "apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: KubeadmControlPlane\n", true},
		{"a kind by its suffix", "apiVersion: infrastructure.example.com/v1\nkind: MachineTemplate\n", true},
		{"a kind by its suffix, read whole over a rule", "apiVersion: v1\nkind: ConfigTemplate\nmetadata: {name: x}\n", true},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", false},
		{"a kind no one reads", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n", false},
		{"the first declaration's rule", "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\n", true},
		{"the second declaration's rule", "apiVersion: v1\nkind: Secret\nmetadata: {name: b}\n", true},
		{"EveryKind", "apiVersion: v1\nkind: Secret\nmetadata: {name: c}\n", true},
		{"no rule", "apiVersion: v1\nkind: Secret\nmetadata: {name: d}\n", false},
		{"metadata no rule can read", "apiVersion: v1\nkind: Secret\nmetadata: [d]\n", true},
		{"labels no rule can read", "apiVersion: v1\nkind: Secret\nmetadata: {name: d, labels: x}\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			item, err := yaml.Parse(tc.doc)
			require.NoError(t, err)
			require.Equal(t, tc.want, plan.Kind(item.GetApiVersion(), item.GetKind()) && plan.Item(item))
		})
	}
	require.False(t, Union(secrets).Kind("v1", "ConfigMap"))
	require.False(t, Union().Kind("v1", "Secret"), "an empty union reads nothing")
}
