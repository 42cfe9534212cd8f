package restart

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// TrustHashAnnotation is the pod-template annotation rotate-certs writes to
// roll a workload. Its value changes exactly when the trust the workload
// must restart for changes, so the workload's own rollout strategy does the
// roll and an unchanged render leaves it alone.
const TrustHashAnnotation = "rotate-certs.dev/trust-hash"

// bundleHash is the hash of the bundle a workload reads, as the target
// object it reads carries it (its rotate-certs.dev/bundle-hash).
type bundleHash struct {
	// Bundle is the bundle's name.
	Bundle string
	// Hash is "sha256:" + hex of the rendered bundle.
	Hash string
}

// trustHash combines the hashes of every bundle a workload consumes into
// one value: "sha256:" + hex of the lines "name hash", sorted by bundle
// name. The order the bundles were found in does not matter.
func trustHash(hashes []bundleHash) string {
	sorted := slices.Clone(hashes)
	slices.SortFunc(sorted, func(a, b bundleHash) int {
		return cmp.Or(cmp.Compare(a.Bundle, b.Bundle), cmp.Compare(a.Hash, b.Hash))
	})
	var b strings.Builder
	for _, h := range sorted {
		b.WriteString(h.Bundle)
		b.WriteByte(' ')
		b.WriteString(h.Hash)
		b.WriteByte('\n')
	}
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}
