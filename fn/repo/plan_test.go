package repo

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestInDomain: the domains' pre-pass reads a package whose policy may
// name a domain, and only those: a bundle's domain in any case (JSON
// decoding matches keys so), and a policy it cannot read plainly (an
// alias) counts; no domain, or no bundle, does not.
func TestInDomain(t *testing.T) {
	head := "apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n  name: p\n"
	for _, tc := range []struct {
		name, spec string
		in         bool
	}{
		{"no bundles", "spec:\n  restart: {}\n", false},
		{"bundles without a domain", "spec:\n  trustBundles:\n  - name: a\n  - name: b\n", false},
		{"a bundle with a domain", "spec:\n  trustBundles:\n  - name: a\n  - name: b\n    domain: mesh\n", true},
		{"a domain in another case", "spec:\n  trustBundles:\n  - name: a\n    Domain: mesh\n", true},
		{"bundles through an alias", "x: &b\n  - name: a\n    domain: mesh\nspec:\n  trustBundles: *b\n", true},
		{"a bundle merged from an alias", "x: &b {domain: mesh}\nspec:\n  trustBundles:\n  - <<: *b\n    name: a\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.in, inDomain(yaml.MustParse(head+tc.spec)))
		})
	}
}
