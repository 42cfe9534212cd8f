package bundle

import (
	"bytes"
	"crypto/x509"
	"sort"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Memory is what an existing target remembers of the renders before this
// one: the certificates it holds and when each of its previous CAs was
// retired.
//
// A bundle fed by several signers on different cadences cannot rank its
// previous CAs by their own dates: a signer that rotates every 60 days
// retires a CA with the same NotBefore as one a 30-day signer retired a
// month earlier, and issuers backdate NotBefore. What matters is when each
// CA stopped being current - the render that retired it - and only the
// target can carry that from one render to the next.
type Memory struct {
	// Certificates are the certificates the target's data holds (its data
	// key, caBundle field, spec.trustBundle or inLine source). The ones
	// that are not current are the previous CAs.
	Certificates []*x509.Certificate
	// Remembered are the CAs a Copy-mode render set aside for Bundle mode
	// (the target's previous annotation), which the caller has checked
	// against the data: the one memory that may bring a CA back into a
	// bundle. Bundle mode restores them (Outcome.Restored); Copy mode
	// keeps remembering them.
	Remembered []*x509.Certificate
	// Retired maps the SHA-256 of a previous CA to its retirement: the
	// now of the render at which it stopped being current.
	Retired map[pki.Fingerprint]time.Time
	// Recorded says the target carries a retirement record, even an
	// empty one: a render that records retirement wrote it, so a
	// certificate it holds with no entry was current at that render and
	// is retired by this one (at now). Without a record (a target written
	// by hand or by an older version) such a certificate counts as
	// retired at the latest NotBefore among the current certificates,
	// never later than now.
	Recorded bool
}

// Retirement is one entry of a target's retirement record.
type Retirement struct {
	// SHA256 identifies the previous CA.
	SHA256 pki.Fingerprint
	// At is when it was retired.
	At time.Time
}

// retiredAt returns when previous CA c was retired, as mem records it or,
// for a CA it has no entry for, by the rule of Memory.Recorded. A
// recorded time after now (a hand edit) is read as now: no CA is retired
// in the future. fallback is the latest NotBefore among the current
// certificates.
func (mem Memory) retiredAt(c *x509.Certificate, fallback, now time.Time) time.Time {
	at, ok := mem.Retired[pki.FingerprintOf(c)]
	switch {
	case !ok && mem.Recorded:
		at = now
	case !ok:
		at = fallback
	}
	if at.After(now) {
		at = now
	}
	return at.UTC()
}

// rankRetired orders previous CAs most recently retired first; ties go to
// the newest NotBefore, then to the lower SHA-256, so that the order (and
// which CAs maxPrevious keeps) depends only on the set and its record.
func rankRetired(prev []*x509.Certificate, retired map[pki.Fingerprint]time.Time) {
	sort.SliceStable(prev, func(i, j int) bool {
		a, b := prev[i], prev[j]
		ra, rb := retired[pki.FingerprintOf(a)], retired[pki.FingerprintOf(b)]
		if !ra.Equal(rb) {
			return ra.After(rb)
		}
		if !a.NotBefore.Equal(b.NotBefore) {
			return a.NotBefore.After(b.NotBefore)
		}
		fa, fb := pki.FingerprintOf(a), pki.FingerprintOf(b)
		return bytes.Compare(fa[:], fb[:]) < 0
	})
}

// RetiredAt returns when previous CA c was retired, as the merge counted
// it; false for a certificate that was not previous.
func (o Outcome) RetiredAt(c *x509.Certificate) (time.Time, bool) {
	at, ok := o.Retired[pki.FingerprintOf(c)]
	return at, ok
}

// Record returns the retirement record the target must carry after this
// render: one entry per previous CA it keeps (in Copy mode, per CA it
// remembers for Bundle mode), sorted by SHA-256. It is empty, not nil,
// when there is none: an empty record still tells the next render that
// every certificate it finds without an entry was current at this one.
func (o Outcome) Record() []Retirement {
	kept := o.Previous
	if len(o.Remembered) > 0 {
		kept = o.Remembered
	}
	out := make([]Retirement, 0, len(kept))
	for _, c := range kept {
		out = append(out, Retirement{SHA256: pki.FingerprintOf(c), At: o.Retired[pki.FingerprintOf(c)]})
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].SHA256[:], out[j].SHA256[:]) < 0 })
	return out
}
