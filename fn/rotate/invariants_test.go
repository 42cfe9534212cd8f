package rotate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The invariants of SPEC section 8, checked over the whole golden corpus.

func itemStrings(t *testing.T, items []*yaml.RNode) map[kube.Key]string {
	t.Helper()
	out := map[kube.Key]string{}
	for _, it := range items {
		s, err := it.String()
		require.NoError(t, err)
		out[kube.KeyOf(it)] = s
	}
	return out
}

func TestInvariantDeterministic(t *testing.T) {
	for _, dir := range goldenCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := goldenInput(t, dir)
			first, _ := execute(t, in)
			second, _ := execute(t, in)
			require.Equal(t, string(first), string(second), "same input and now must give the same bytes")
		})
	}
}

func TestInvariantIdempotent(t *testing.T) {
	for _, dir := range goldenCases(t) {
		if strings.HasPrefix(filepath.Base(dir), "err-") {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			first, err := execute(t, goldenInput(t, dir))
			require.NoError(t, err)
			// The output ResourceList, fed back in, carries the same
			// functionConfig and the rendered targets as input.
			second, err := execute(t, first)
			require.NoError(t, err)
			a, b := parseResourceList(t, first), parseResourceList(t, second)
			require.Equal(t, itemStrings(t, a.items), itemStrings(t, b.items), "re-rendering the output must change nothing")
			require.NotContains(t, b.results, "was not in the input and was created", "the second render must find every target")
		})
	}
}

func TestInvariantPreserving(t *testing.T) {
	for _, dir := range goldenCases(t) {
		if strings.HasPrefix(filepath.Base(dir), "err-") {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := goldenInput(t, dir)
			out, err := execute(t, in)
			require.NoError(t, err)
			before := itemStrings(t, parseResourceList(t, in).items)
			after := parseResourceList(t, out).items
			afterStrings := itemStrings(t, after)
			for key, s := range before {
				got, ok := afterStrings[key]
				require.True(t, ok, "%s was lost", key)
				node := findItem(after, key)
				if _, managed := node.GetAnnotations()[trustbundle.HashAnnotation]; managed || clusterAPIManaged(node) {
					continue
				}
				// A rolled workload: only its trust-hash may differ.
				s, got = withoutTrustHash(t, s), withoutTrustHash(t, got)
				require.Equal(t, s, got, "%s is not managed and must pass through unchanged", key)
			}
		})
	}
}

func findItem(items []*yaml.RNode, key kube.Key) *yaml.RNode {
	for _, it := range items {
		if kube.KeyOf(it) == key {
			return it
		}
	}
	return nil
}
