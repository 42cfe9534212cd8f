package trustdiff

import (
	"github.com/rotate-certs/rotate-certs/fn/report"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The one place the diff reads certificate finding: the certificates of
// the items as `check` finds them. When finding has a package of its own,
// this adapter is all that changes.

// found is one certificate in one value of one resource.
type found = report.Found

// findCertificates returns every certificate of items and the values that
// hold certificate data that does not parse.
func findCertificates(items []*yaml.RNode) ([]found, []report.Problem) {
	inv := report.Scan(items)
	return inv.Certificates, inv.Problems
}
