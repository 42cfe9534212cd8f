package trustdiff

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestDuplicatesInTreeOrder: the names several objects of one directory
// share come in the order of their first objects, each with every place,
// however the objects interleave; a name held once is no duplicate.
func TestDuplicatesInTreeOrder(t *testing.T) {
	var items []*yaml.RNode
	for i, name := range []string{"a", "b", "c", "b", "a", "a"} {
		n, err := yaml.Parse(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: ns\n"+
			"  annotations:\n    config.kubernetes.io/path: d/f%d.yaml\n    config.kubernetes.io/index: '0'\n", name, i))
		require.NoError(t, err)
		items = append(items, n)
	}
	var got [][]string
	for _, d := range Duplicates(items, nil) {
		got = append(got, append([]string{d.resource.Name}, d.places...))
	}
	require.Equal(t, [][]string{
		{"a", "d/f0.yaml#0", "d/f4.yaml#0", "d/f5.yaml#0"},
		{"b", "d/f1.yaml#0", "d/f3.yaml#0"},
	}, got)
}
