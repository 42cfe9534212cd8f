package initpolicy_test

import (
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/initpolicy"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/internal/golden"
)

// readExample reads the resources of examples/NAME, its policies left out
// unless withPolicy.
func readExample(t *testing.T, name string, withPolicy bool) []*yaml.RNode {
	t.Helper()
	tree, err := resio.ReadTree(golden.Path("examples", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	var items []*yaml.RNode
	for _, it := range tree.Items {
		if withPolicy || !layout.IsPolicy(it) {
			items = append(items, it)
		}
	}
	return items
}

// TestScanOfSeveralClustersAtOnceIsAValidPolicy scans the objects of two
// clusters as one input (stdin, or directories init cannot tell apart):
// each holds Linkerd's trust roots in the same namespace. The policy init
// writes must decode, each namespace listed once: before the fix the mesh
// target listed namespace linkerd twice in target.namespaces, which the
// policy rejects, and the injected namespaces of restart.mesh's comment
// twice.
func TestScanOfSeveralClustersAtOnceIsAValidPolicy(t *testing.T) {
	for _, c := range []struct {
		name     string
		clusters []string
		policies bool
	}{
		{"two copies of linkerd", []string{"linkerd", "linkerd"}, false},
		{"multicluster east and west", []string{"multicluster/clusters/east", "multicluster/clusters/west"}, false},
		{"multicluster east and west with their policies", []string{"multicluster/clusters/east", "multicluster/clusters/west"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var items []*yaml.RNode
			for _, cl := range c.clusters {
				items = append(items, readExample(t, cl, c.policies)...)
			}
			plan, err := initpolicy.Propose(items, initNow)
			if err != nil {
				t.Fatal(err)
			}
			_, err = plan.YAML("")
			if err != nil {
				t.Errorf("the policy init writes does not validate: %v", err)
			}
			for _, b := range plan.Bundles {
				if dup := repeated(append([]string{b.TargetNamespace}, b.OtherNamespaces...)); dup != "" {
					t.Errorf("bundle %s: the target's namespaces list %s twice", b.Name, dup)
				}
				if dup := repeated(b.MeshNamespaces); dup != "" {
					t.Errorf("bundle %s: the namespaces the mesh injects list %s twice", b.Name, dup)
				}
			}
		})
	}
}

// repeated returns the first value listed twice in s, or "".
func repeated(s []string) string {
	seen := map[string]bool{}
	for _, v := range s {
		if seen[v] {
			return v
		}
		seen[v] = true
	}
	return ""
}
