package kube

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DuplicateKeysOf names each duplicate by its field path, in small
// mappings (compared pair by pair) and large ones (indexed) alike.
func TestDuplicateKeysOf(t *testing.T) {
	var big strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&big, "    k%d: v\n", i)
	}
	node, err := yaml.Parse("spec:\n  containers:\n  - name: a\n    name: b\n  big:\n" + big.String() + "    k7: again\n")
	require.NoError(t, err)
	var got []string
	for _, d := range DuplicateKeysOf(node) {
		got = append(got, fmt.Sprintf("%s %d %d %v", d.Field, d.Line, d.FirstLine, d.TopLevel))
	}
	require.Equal(t, []string{"spec.containers[0].name 4 3 false", "spec.big.k7 46 13 false"}, got)
	require.False(t, HasDuplicateKeys(yaml.MustParse("a: {b: 1, c: 2}\nd: [{b: 1}, {b: 1}]\n")))
}
