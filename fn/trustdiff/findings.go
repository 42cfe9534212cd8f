package trustdiff

import (
	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The one place the diff reads certificate finding: the certificates of
// the items as `check` finds them (package inventory, ScanAll: the values
// of pod templates' env and Helm values included).

// found is one certificate in one value of one resource.
type found = inventory.Found

// findCertificates returns every certificate of items (embedded ones
// too: inventory.ScanAll), by the target-kind table targets, and the
// values that hold certificate data that does not parse.
func findCertificates(items []*yaml.RNode, targets kube.TargetTable) ([]found, []inventory.Problem) {
	inv := inventory.ScanAllTargets(items, targets)
	return inv.Certificates, inv.Problems
}
