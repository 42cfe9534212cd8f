// Package bundle computes a trust bundle: which certificates a target must
// hold, given what must be trusted now (current), what the target held
// before (previous), and the leaves found in the input. It is pure: no YAML,
// no clock, no I/O - the caller passes certificates and the time.
//
// The rules are the trust bundle rules (docs/design/contract.md, Trust
// bundles; docs/reference/bundle-rules.md); each is one block of
// MergeTarget, in order.
// The output order is canonical (see Outcome.Certificates), so that the same
// set of certificates always renders to the same bytes.
package bundle

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"sort"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Options are a bundle's retain settings, already defaulted.
type Options struct {
	// Copy selects Copy mode: output is exactly the current certificates.
	Copy bool
	// MaxPrevious is how many previous CAs may be carried over.
	MaxPrevious int
	// RetainFor, when positive, drops a previous CA that long after its
	// retirement (see Memory).
	RetainFor time.Duration
	// ProtectIssuers keeps a previous CA that still verifies a valid leaf.
	ProtectIssuers bool
	// Verify reports whether ca signed cert; nil means Verifies. Callers
	// that merge many bundles over the same leaves pass a memoizing one.
	Verify func(ca, cert *x509.Certificate) bool
	// HoldUntil, when set, keeps every previous CA that has not expired,
	// whatever maxPrevious and retain.for say: the bundle's workloads roll
	// out in waves that are not done (until then at least), and some still
	// run with the trust they started with.
	HoldUntil time.Time
}

// Leaf is an end-entity certificate found in the input, with an opaque
// description of where it was found (used in messages only).
type Leaf struct {
	Cert  *x509.Certificate
	Where string
}

// Reason says why a certificate was dropped or kept beyond the limits.
type Reason string

// Reasons reported in Outcome.Decisions.
const (
	DroppedDuplicate      Reason = "duplicate"
	DroppedExpiredCurrent Reason = "expired current"
	DroppedExpired        Reason = "expired previous"
	DroppedRetainFor      Reason = "retain.for elapsed"
	DroppedMaxPrevious    Reason = "beyond retain.maxPrevious"
	DroppedCopyMode       Reason = "Copy mode"
	RememberedCopyMode    Reason = "Copy mode; remembered for a switch back to Bundle mode"
	KeptProtected         Reason = "protected issuer"
	KeptWaves             Reason = "restart waves pending"
)

// Decision records what happened to one certificate that did not simply
// pass into the output.
type Decision struct {
	Cert   *x509.Certificate
	Reason Reason
	// Leaves are the leaves that made a protected CA stay. The slice may
	// be shared with other outcomes of the same LeafIndex: read only.
	Leaves []Leaf
}

// Outcome is the computed bundle.
type Outcome struct {
	// Current are the current certificates that were kept (deduplicated,
	// not expired), in source order.
	Current []*x509.Certificate
	// Previous are the previous certificates carried over, most recently
	// retired first (ties: newest NotBefore, then SHA-256).
	Previous []*x509.Certificate
	// Remembered are, in Copy mode, the previous certificates Bundle mode
	// would have carried over, in the order of Previous. They are not in
	// the bundle; the target keeps them aside so that switching back to
	// Bundle mode restores them.
	Remembered []*x509.Certificate
	// Restored are the previous certificates of Bundle mode that the
	// target's data did not hold: brought back from the memory of a
	// Copy-mode render (Memory.Remembered), in the order of Previous. Each
	// is also in Previous. No other certificate enters a bundle that is
	// not current or already in the target's data.
	Restored []*x509.Certificate
	// Retired is when each previous certificate that was not expired
	// stopped being current (see Memory), by SHA-256: the kept ones, the
	// remembered ones and the dropped ones alike.
	Retired map[pki.Fingerprint]time.Time
	// Decisions explain every dropped or protected certificate.
	Decisions []Decision
}

// Certificates returns the bundle in its canonical order: newest NotBefore
// first, then latest NotAfter, then SHA-256. The order depends only on the
// set of certificates, never on which of them are current: when a
// pre-distributed CA becomes the signing one, or a CA moves from the
// sources to the previous list, the set is unchanged and so are the bytes -
// no diff, no restart. Current CAs are newer than the ones they replace, so
// for a rotation this is "current, then previous".
func (o Outcome) Certificates() []*x509.Certificate {
	out := make([]*x509.Certificate, 0, len(o.Current)+len(o.Previous))
	out = append(out, o.Current...)
	out = append(out, o.Previous...)
	sortCanonical(out)
	return out
}

func sortCanonical(certs []*x509.Certificate) {
	sort.SliceStable(certs, func(i, j int) bool { return canonicalLess(certs[i], certs[j]) })
}

func canonicalLess(a, b *x509.Certificate) bool {
	if !a.NotBefore.Equal(b.NotBefore) {
		return a.NotBefore.After(b.NotBefore)
	}
	if !a.NotAfter.Equal(b.NotAfter) {
		return a.NotAfter.After(b.NotAfter)
	}
	fa, fb := pki.FingerprintOf(a), pki.FingerprintOf(b)
	return bytes.Compare(fa[:], fb[:]) < 0
}

// PEM returns the bundle's canonical encoding.
func (o Outcome) PEM() []byte { return pki.EncodePEM(o.Certificates()) }

// LatestNotBefore returns the newest NotBefore among the current
// certificates (zero when there are none).
func (o Outcome) LatestNotBefore() time.Time {
	var latest time.Time
	for _, c := range o.Current {
		if c.NotBefore.After(latest) {
			latest = c.NotBefore
		}
	}
	return latest
}

// Merge computes the bundle from a target that carries no retirement
// record: MergeTarget with Memory{Certificates: previous}.
func Merge(current, previous []*x509.Certificate, leaves *LeafIndex, opts Options, now time.Time) (Outcome, error) {
	return MergeTarget(current, Memory{Certificates: previous}, leaves, opts, now)
}

// MergeTarget computes the bundle. current is every certificate read from
// the sources in source order; target is what the existing target
// remembers (its certificates and retirement record); leaves are the
// leaves of the input, indexed once per run (nil for none). It fails when
// no current certificate is left.
func MergeTarget(current []*x509.Certificate, target Memory, leaves *LeafIndex, opts Options, now time.Time) (Outcome, error) {
	var out Outcome
	cur := pki.NewSet()
	if err := out.mergeCurrent(cur, current, now); err != nil {
		return Outcome{}, err
	}
	prev, remembered := out.mergePrevious(target, cur, now)
	out.keepPrevious(prev, leaves, opts, now)
	for _, c := range out.Previous {
		if remembered.Has(c) {
			out.Restored = append(out.Restored, c)
		}
	}
	return out, nil
}

// mergeCurrent applies rule 1: current = source certificates in order,
// first occurrence kept, expired ones dropped, not-yet-valid ones kept. It
// adds every certificate seen among the sources to cur, expired ones
// included, and fails when no current certificate is left.
func (out *Outcome) mergeCurrent(cur *pki.Set, current []*x509.Certificate, now time.Time) error {
	for _, c := range current {
		switch {
		case cur.Has(c):
			continue
		case pki.Expired(c, now):
			out.Decisions = append(out.Decisions, Decision{Cert: c, Reason: DroppedExpiredCurrent})
			cur.Add(c) // remembered so that it is not carried as previous either
			continue
		}
		cur.Add(c)
		out.Current = append(out.Current, c)
	}
	if len(out.Current) == 0 {
		if len(current) == 0 {
			return fmt.Errorf("the sources hold no certificate")
		}
		return fmt.Errorf("every current certificate has expired (%d seen); renew the CA before rendering", cur.Len())
	}
	return nil
}

// mergePrevious applies rule 2: previous = what the target holds that is
// not current, each with its retirement (rule 4's record, or the fallback
// for a target without one), then the CAs of a Copy-mode render's memory
// that the data does not hold (returned as remembered).
func (out *Outcome) mergePrevious(target Memory, cur *pki.Set, now time.Time) (prev []*x509.Certificate, remembered *pki.Set) {
	seenPrev := pki.NewSet()
	remembered = pki.NewSet()
	fallback := out.LatestNotBefore()
	out.Retired = map[pki.Fingerprint]time.Time{}
	data := len(target.Certificates)
	for i, c := range append(target.Certificates[:data:data], target.Remembered...) {
		if cur.Has(c) || !seenPrev.Add(c) {
			continue
		}
		if i >= data {
			remembered.Add(c)
		}
		if pki.Expired(c, now) {
			out.Decisions = append(out.Decisions, Decision{Cert: c, Reason: DroppedExpired})
			continue
		}
		out.Retired[pki.FingerprintOf(c)] = target.retiredAt(c, fallback, now)
		prev = append(prev, c)
	}
	return prev, remembered
}

// keepPrevious applies rules 3 and 4: drop the previous CAs whose
// retain.for has run out since their retirement, keep the maxPrevious most
// recently retired of the rest, and keep any other that a valid leaf still
// depends on. Copy mode writes none of them, but remembers the ones Bundle
// mode would keep, so that switching back restores them.
func (out *Outcome) keepPrevious(prev []*x509.Certificate, leaves *LeafIndex, opts Options, now time.Time) {
	rankRetired(prev, out.Retired)
	verify := opts.Verify
	if verify == nil {
		verify = Verifies
	}
	kept := &out.Previous
	if opts.Copy {
		kept = &out.Remembered
	}
	n := 0
	for _, c := range prev {
		var reason Reason
		switch {
		case opts.RetainFor > 0 && now.After(out.Retired[pki.FingerprintOf(c)].Add(opts.RetainFor)):
			reason = DroppedRetainFor
		case n >= opts.MaxPrevious:
			reason = DroppedMaxPrevious
		default:
			n++
			*kept = append(*kept, c)
			if opts.Copy {
				out.Decisions = append(out.Decisions, Decision{Cert: c, Reason: RememberedCopyMode})
			}
			continue
		}
		if !opts.HoldUntil.IsZero() && !opts.Copy {
			*kept = append(*kept, c)
			out.Decisions = append(out.Decisions, Decision{Cert: c, Reason: KeptWaves})
			continue
		}
		if opts.ProtectIssuers {
			if deps := leaves.dependents(c, out.Current, now, verify); len(deps) > 0 {
				*kept = append(*kept, c)
				d := Decision{Cert: c, Reason: KeptProtected, Leaves: deps}
				if opts.Copy {
					d = Decision{Cert: c, Reason: RememberedCopyMode}
				}
				out.Decisions = append(out.Decisions, d)
				continue
			}
		}
		if opts.Copy {
			reason = DroppedCopyMode
		}
		out.Decisions = append(out.Decisions, Decision{Cert: c, Reason: reason})
	}
}

// Verifies reports whether ca directly signed cert (signature and the CA's
// right to sign), the relation a trust bundle of issuing CAs relies on.
func Verifies(ca, cert *x509.Certificate) bool {
	if len(ca.RawSubject) != len(cert.RawIssuer) || string(ca.RawSubject) != string(cert.RawIssuer) {
		return false
	}
	return cert.CheckSignatureFrom(ca) == nil
}

// NewVerifier returns a Verifies that remembers its answers, for one run:
// the bundles of a policy often share previous CAs and leaves, and a
// signature check costs far more than a map lookup. Answers are keyed by
// the certificate pointers, not by hashes of the certificates: a run
// parses each distinct certificate once (pki.Cache), so the same
// certificate is the same pointer, and an equal certificate parsed twice
// only costs a second check.
func NewVerifier() func(ca, cert *x509.Certificate) bool {
	type pair struct{ ca, cert *x509.Certificate }
	seen := map[pair]bool{}
	return func(ca, cert *x509.Certificate) bool {
		if string(ca.RawSubject) != string(cert.RawIssuer) {
			return false
		}
		k := pair{ca, cert}
		ok, found := seen[k]
		if !found {
			ok = Verifies(ca, cert)
			seen[k] = ok
		}
		return ok
	}
}

// Canonical returns certs in the bundle's canonical order (see
// Outcome.Certificates), as a new slice.
func Canonical(certs []*x509.Certificate) []*x509.Certificate {
	out := append([]*x509.Certificate(nil), certs...)
	sortCanonical(out)
	return out
}
