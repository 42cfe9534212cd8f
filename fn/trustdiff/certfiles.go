package trustdiff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/resio"
)

// Certificate files. A certificate or key file (*.pem, *.crt, *.cer, *.key)
// that no kustomization build reads is not part of what the cluster gets
// as far as the tree says: a script, a Helm value or a person may still
// put it there. When a change touches one, the diff lists it - changed,
// not judged - so that it is never passed over in silence; its content is
// never shown (a key file is named, nothing more). A manifest file whose
// documents that are no Kubernetes object (chart values, a program's test
// input, configuration) hold certificate or key material is listed the
// same way, by a digest of that material: its change is named, not judged.

// CertFileChange is a certificate or key file the change adds, removes or
// changes, that no build reads.
type CertFileChange struct {
	File string `json:"file"`
	// Change is "added", "removed" or "changed".
	Change string `json:"change"`
}

// certFileChanges compares the certificate files of two trees, by file.
func certFileChanges(base, head *Model) []CertFileChange {
	var out []CertFileChange
	for f, sum := range head.certFiles {
		switch was, ok := base.certFiles[f]; {
		case !ok:
			out = append(out, CertFileChange{File: f, Change: "added"})
		case was != sum:
			out = append(out, CertFileChange{File: f, Change: "changed"})
		}
	}
	for f := range base.certFiles {
		if _, ok := head.certFiles[f]; !ok {
			out = append(out, CertFileChange{File: f, Change: "removed"})
		}
	}
	slices.SortFunc(out, func(a, b CertFileChange) int { return strings.Compare(a.File, b.File) })
	return out
}

// certFileLine words a certificate file change.
func certFileLine(c CertFileChange) string {
	if resio.IsManifest(c.File) {
		return fmt.Sprintf("%s: certificates outside any Kubernetes object %s; not judged", c.File, c.Change)
	}
	return fmt.Sprintf("%s: %s; no kustomization build reads it: not judged", c.File, c.Change)
}
