package trustdiff

import "github.com/rotate-certs/rotate-certs/fn/inventory"

// The one place the diff reads certificate finding: the certificates of
// the items as `check` finds them (package inventory, ScanAll: the values
// of pod templates' env and Helm values included), object by object
// (memo.go: builder.findCertificates).

// found is one certificate in one value of one resource.
type found = inventory.Found
