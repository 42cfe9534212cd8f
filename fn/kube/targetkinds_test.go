package kube

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestTargetKindScope: the key of an object of a target kind keeps its
// namespace exactly when the kind's row of the target-kind table says it
// is namespaced - the scope map reads the table, so a cluster-scoped kind
// added there is never keyed by the namespace kustomize sets on it.
func TestTargetKindScope(t *testing.T) {
	for _, d := range TargetKinds().Rows() {
		for _, v := range d.Versions {
			n, err := yaml.Parse("apiVersion: " + v + "\nkind: " + string(d.Kind) + "\nmetadata: {name: x, namespace: ns}\n")
			require.NoError(t, err)
			want := ""
			if d.Namespaced {
				want = "ns"
			}
			assert.Equal(t, Key{Kind: string(d.Kind), Namespace: want, Name: "x"}, KeyOf(n), v)
		}
	}
	var zero TargetTable
	assert.Equal(t, TargetKinds().Names(), zero.Names(), "the zero table is the shipped one")
}
