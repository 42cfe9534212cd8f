package anchors

import (
	"crypto/x509"
	"sync"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Verified remembers signature checks across runs, by the two
// certificates' contents: the runs of one command - the packages of a
// repository on every core, `diff`'s two sides - meet the same CA and the
// same certificate again, each run with its own parse of them, and a
// signature check costs far more than hashing both. Safe for concurrent
// use; a nil *Verified remembers nothing beyond the run.
type Verified struct {
	mu   sync.Mutex
	seen map[[2]pki.Fingerprint]bool
}

// NewVerified returns an empty Verified.
func NewVerified() *Verified { return &Verified{seen: map[[2]pki.Fingerprint]bool{}} }

// Verifier returns a run's signature check (NewVerifier's) that asks v
// before it checks a pair it has not seen in the run, and tells v what it
// found.
func (v *Verified) Verifier() func(ca, cert *x509.Certificate) bool {
	if v == nil {
		return NewVerifier()
	}
	return newVerifier(func(ca, cert *x509.Certificate) bool {
		k := [2]pki.Fingerprint{pki.FingerprintOf(ca), pki.FingerprintOf(cert)}
		v.mu.Lock()
		ok, found := v.seen[k]
		v.mu.Unlock()
		if !found {
			ok = verifies(ca, cert)
			v.mu.Lock()
			v.seen[k] = ok
			v.mu.Unlock()
		}
		return ok
	})
}
