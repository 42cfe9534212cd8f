package anchors

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
	// empty one (a render of this version wrote it). A previous CA without
	// an entry counts as retired at this render either way: with a record
	// it was current at the last render; without one (a target written by
	// hand, by an older version, or adopted at the very render that
	// rotates it) the overlap starts when rotate-certs first sees the CA
	// leave, never earlier - issuers cut a new CA days before anyone
	// commits it, so counting from a NotBefore would drop the old CA in
	// the render that should start the overlap.
	Recorded bool
	// Unused maps the SHA-256 of a previous CA to the first render at
	// which nothing in the input chained to it, since when nothing has:
	// the target's unused record, which retain.dropUnusedAfter counts
	// from (see unusedSince).
	Unused map[pki.Fingerprint]time.Time
}

// Retirement is one entry of a target's retirement record, or of its
// unused record.
type Retirement struct {
	// SHA256 identifies the previous CA.
	SHA256 pki.Fingerprint
	// At is when it was retired (in the unused record: since when nothing
	// has chained to it).
	At time.Time
}

// retiredAt returns when previous CA c was retired, as mem records it,
// else now (see Memory.Recorded). A recorded time after now (a hand edit)
// is read as now: no CA is retired in the future.
func (mem Memory) retiredAt(c *x509.Certificate, now time.Time) time.Time {
	at, ok := mem.Retired[pki.FingerprintOf(c)]
	if !ok || at.After(now) {
		at = now
	}
	return at.UTC()
}

// unusedSince returns since when nothing in the input has chained to
// previous CA c, retired at retired, which nothing chains to at this
// render: the time mem records, else now. A CA without an entry had
// something chain to it at the last render, or the target kept no record
// (written by hand or by an older version, or dropUnusedAfter was just
// set): counting from now can only lengthen the overlap. The time is
// never after now (a hand edit: no CA is unused in the future) nor before
// the retirement (a CA is unused as a previous CA only once it is one), so
// an edited entry can at worst end the overlap where counting from the
// retirement would.
func (mem Memory) unusedSince(c *x509.Certificate, retired, now time.Time) time.Time {
	at, ok := mem.Unused[pki.FingerprintOf(c)]
	if !ok || at.After(now) {
		at = now
	}
	if at.Before(retired) {
		at = retired
	}
	return at.UTC()
}

// rankRetired orders previous CAs most recently retired first; ties go to
// the newest NotBefore, then to the lower SHA-256, so that the order (and
// which CAs maxPrevious keeps) depends only on the set and its record.
func rankRetired(prev []*x509.Certificate, retired map[pki.Fingerprint]time.Time) {
	type ranked struct {
		c  *x509.Certificate
		fp pki.Fingerprint
	}
	rs := make([]ranked, len(prev))
	for i, c := range prev {
		rs[i] = ranked{c, pki.FingerprintOf(c)}
	}
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		ra, rb := retired[a.fp], retired[b.fp]
		if !ra.Equal(rb) {
			return ra.After(rb)
		}
		if !a.c.NotBefore.Equal(b.c.NotBefore) {
			return a.c.NotBefore.After(b.c.NotBefore)
		}
		return bytes.Compare(a.fp[:], b.fp[:]) < 0
	})
	for i, r := range rs {
		prev[i] = r.c
	}
}

// retiredAt returns when previous CA c was retired, as the merge counted
// it; false for a certificate that was not previous or had expired.
func (o Outcome) retiredAt(c *x509.Certificate) (time.Time, bool) {
	fp := pki.FingerprintOf(c)
	for _, f := range o.Fates {
		if pki.FingerprintOf(f.Cert) == fp && !f.RetiredAt.IsZero() {
			return f.RetiredAt, true
		}
	}
	return time.Time{}, false
}

// Record returns the retirement record the target must carry after this
// render: one entry per previous CA it keeps (in Copy mode, per CA it
// remembers for Bundle mode), sorted by SHA-256. It is empty, not nil,
// when there is none: an empty record still tells the next render that
// every certificate it finds without an entry was current at this one.
func (o Outcome) Record() []Retirement {
	return o.entries(func(f Fate) time.Time { return f.RetiredAt })
}

// UnusedRecord returns the unused record the target must carry after this
// render: one entry per previous CA it keeps or remembers that nothing in
// the input chains to, with Fate.UnusedSince, sorted by SHA-256. Empty
// when there is none (always without retain.dropUnusedAfter): a CA
// without an entry at the next render counts as unused from that render.
func (o Outcome) UnusedRecord() []Retirement {
	return o.entries(func(f Fate) time.Time { return f.UnusedSince })
}

// entries returns at(f) for each previous CA the target keeps or
// remembers whose at is set, sorted by SHA-256; empty, not nil, for none.
func (o Outcome) entries(at func(Fate) time.Time) []Retirement {
	out := make([]Retirement, 0, len(o.Previous)+len(o.Remembered))
	for _, f := range o.Fates {
		if (f.inBundle() || f.State == FateRemembered) && !at(f).IsZero() {
			out = append(out, Retirement{SHA256: pki.FingerprintOf(f.Cert), At: at(f)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].SHA256[:], out[j].SHA256[:]) < 0 })
	return out
}
