package trustdiff

import (
	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The one place the diff reads certificate finding: the certificates of
// the items as `check` finds them (package inventory).

// found is one certificate in one value of one resource.
type found = inventory.Found

// findCertificates returns every certificate of items, by the target-kind
// table targets, and the values that hold certificate data that does not
// parse.
func findCertificates(items []*yaml.RNode, targets kube.TargetTable) ([]found, []inventory.Problem) {
	inv := inventory.ScanTargets(items, pki.NewCache(), targets)
	return inv.Certificates, inv.Problems
}
