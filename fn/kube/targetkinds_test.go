package kube

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestAddedTargetKind: the key of an object of a target kind keeps its
// namespace exactly when the kind's row of the target-kind table says it
// is namespaced - TargetTable.KeyOf reads the table, so a cluster-scoped kind
// added there (here by a test-only row) is never keyed by the namespace
// kustomize sets on it, and an index made with the table keys and finds
// it so.
func TestAddedTargetKind(t *testing.T) {
	anchor := TargetDescriptor{Kind: "TrustAnchor", Group: "example.com", Versions: []string{"example.com/v1"}}
	added := NewTargetTable(append(TargetKinds().Rows(), anchor)...)
	for _, table := range []TargetTable{TargetKinds(), added} {
		for _, d := range table.Rows() {
			for _, v := range d.Versions {
				n, err := yaml.Parse("apiVersion: " + v + "\nkind: " + string(d.Kind) + "\nmetadata: {name: x, namespace: ns}\n")
				require.NoError(t, err)
				want := Key{Kind: string(d.Kind), Name: "x"}
				if d.Namespaced {
					want.Namespace = "ns"
				}
				assert.Equal(t, want, table.keyOf(n), v)
				assert.Equal(t, want, NewIndexWith([]*yaml.RNode{n}, table).KeyOf(n), v)
				assert.Same(t, n.YNode(), NewIndexWith([]*yaml.RNode{n}, table).GetIn(d.Group, want).YNode(), v)
			}
		}
	}
	n, err := yaml.Parse("apiVersion: example.com/v1\nkind: TrustAnchor\nmetadata: {name: x, namespace: ns}\n")
	require.NoError(t, err)
	assert.Equal(t, Key{Kind: "TrustAnchor", Namespace: "ns", Name: "x"}, KeyOf(n), "not a kind of the shipped table")
	var zero TargetTable
	assert.Equal(t, TargetKinds().Names(), zero.Names(), "the zero table is the shipped one")
	assert.Equal(t, KeyOf(n), zero.keyOf(n), "the zero table keys as the shipped one")
}
