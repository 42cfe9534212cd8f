// Package anchors decides which CA anchors a trust bundle holds: which
// certificates a target must hold, given what must be trusted now (current),
// what the target held before (previous), and the leaves found in the input;
// one fate per previous CA, the chains to it, its retirement and the re-issue
// list. It is pure: no YAML, no clock, no I/O - the caller passes
// certificates and the time.
//
// The rules are the trust bundle rules (docs/design/contract.md, Trust
// bundles; docs/reference/bundle-rules.md); each is one block of
// MergeTarget, in order.
// The output order is canonical (see Outcome.Certificates), so that the same
// set of certificates always renders to the same bytes.
package anchors

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
	// DropUnusedAfter, when positive, drops a previous CA that nothing in
	// the input has chained to for that long: counted from the first
	// render at which nothing did (Fate.UnusedSince, Memory.Unused), not
	// from its retirement.
	DropUnusedAfter time.Duration
	// ProtectIssuers keeps a previous CA that a valid certificate of the
	// input still chains to.
	ProtectIssuers bool
	// HoldUntil, when set, keeps every previous CA that has not expired,
	// whatever maxPrevious, retain.for and dropUnusedAfter say: the
	// bundle's workloads roll out in waves that are not done (until then
	// at least), and some still run with the trust they started with.
	HoldUntil time.Time
	// Domain, when set, is the trust domain of the bundle as this render
	// sees it: seen whole, the certificates of the domain's other
	// packages count like the input's (Fate.elsewhere); seen in part, a
	// previous CA leaves only by expiry (keptByDomain), since certificates
	// the render cannot see may still need it.
	Domain *DomainView
}

// Reason says why a certificate was dropped.
type Reason string

// Reasons reported in Outcome.decisions and Fate.Reason.
const (
	droppedExpiredCurrent Reason = "expired current"
	droppedExpired        Reason = "expired previous"
	droppedRetainFor      Reason = "retain.for elapsed"
	droppedUnused         Reason = "unused: retain.dropUnusedAfter elapsed"
	droppedMaxPrevious    Reason = "beyond retain.maxPrevious"
)

// decision records a current certificate that did not pass into the
// output (rule 1); previous CAs have a Fate each.
type decision struct {
	cert   *x509.Certificate
	reason Reason
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
	// Fates are the decisions about every previous CA, most recently
	// retired first, expired ones last.
	Fates []Fate
	// Broken are the certificates of the input that verify against
	// nothing the bundle trusts because a CA on their chain left it or
	// expired, other than the dependents of the dropped Fates.
	Broken []Broken
	// decisions explain every current certificate that was dropped.
	decisions []decision
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

// MergeTarget computes the bundle. current is every certificate read from
// the sources in source order; target is what the existing target
// remembers (its certificates and retirement record); chains indexes the
// certificates of the input once per run (nil for none). It fails when no
// current certificate is left.
func MergeTarget(current []*x509.Certificate, target Memory, chains *ChainIndex, opts Options, now time.Time) (Outcome, error) {
	var out Outcome
	cur := pki.NewSet()
	if err := out.mergeCurrent(cur, current, now); err != nil {
		return Outcome{}, err
	}
	prev, expired, remembered := out.mergePrevious(target, cur, now)
	m := newMerger(chains, out.Current, target, remembered, now)
	out.Fates = m.keepPrevious(prev, opts)
	for _, c := range expired {
		f := m.fate(c, time.Time{}, FateDropped, droppedExpired, c.NotAfter)
		f.Verdict = verdict(f, opts)
		out.Fates = append(out.Fates, f)
	}
	for _, f := range out.Fates {
		if f.inBundle() {
			out.Previous = append(out.Previous, f.Cert)
			if f.Restored {
				out.Restored = append(out.Restored, f.Cert)
			}
		}
	}
	if opts.Copy {
		out.toCopy(opts, now)
	}
	out.Broken = m.broken(out, now)
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
			out.decisions = append(out.decisions, decision{cert: c, reason: droppedExpiredCurrent})
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

// mergePrevious applies rule 2: previous = what the target's data holds
// that is not current, in its order, then the CAs of a Copy-mode render's
// memory that the data does not hold (also returned as remembered); the
// expired ones are returned apart (rule 3 drops them whatever else holds).
func (out *Outcome) mergePrevious(target Memory, cur *pki.Set, now time.Time) (prev, expired []*x509.Certificate, remembered *pki.Set) {
	seen, remembered := pki.NewSet(), pki.NewSet()
	data := len(target.Certificates)
	for i, c := range append(target.Certificates[:data:data], target.Remembered...) {
		if cur.Has(c) || !seen.Add(c) {
			continue
		}
		if i >= data {
			remembered.Add(c)
		}
		if pki.Expired(c, now) {
			expired = append(expired, c)
			continue
		}
		prev = append(prev, c)
	}
	return prev, expired, remembered
}

// merger computes the fates of one target's previous CAs against its
// current CAs and the certificates of the input.
type merger struct {
	chains  *ChainIndex
	current *rootSet
	// all are every CA of the target, current and previous: never a
	// certificate that chains to the bundle.
	all    *pki.Set
	allKey string
	target Memory
	// remembered are the previous CAs that only Copy-mode memory held.
	remembered *pki.Set
	now        time.Time
}

func newMerger(chains *ChainIndex, current []*x509.Certificate, target Memory, remembered *pki.Set, now time.Time) *merger {
	if chains == nil {
		chains = NewChainIndex(nil, nil)
	}
	all := append(append(append([]*x509.Certificate(nil), current...), target.Certificates...), target.Remembered...)
	return &merger{chains: chains, current: chains.rootSet(current), all: pki.NewSet(all...), allKey: chains.key(all), target: target,
		remembered: remembered, now: now}
}

// fate builds the fate of previous CA c: its state, what chains to it and
// its verdict.
func (m *merger) fate(c *x509.Certificate, retired time.Time, state FateState, reason Reason, leaves time.Time) Fate {
	return Fate{Cert: c, RetiredAt: retired, State: state, Reason: reason, LeavesAt: leaves.UTC(), Restored: m.remembered.Has(c),
		Dependents: m.chains.dependents(c, m.current, m.all, m.allKey, m.now)}
}

// keepPrevious applies rules 3 and 4 and retain.dropUnusedAfter to the
// previous CAs that have not expired: it ranks them by retirement, drops
// those whose retain.for has run out and those nothing has chained to for
// dropUnusedAfter, keeps the maxPrevious most recently retired of the
// rest, and keeps any other that a valid certificate of the input still
// chains to (protectIssuers).
func (m *merger) keepPrevious(prev []*x509.Certificate, opts Options) []Fate {
	retired := map[pki.Fingerprint]time.Time{}
	for _, c := range prev {
		retired[pki.FingerprintOf(c)] = m.target.retiredAt(c, m.now)
	}
	rankRetired(prev, retired)
	var fates []Fate
	n := 0
	for _, c := range prev {
		at := retired[pki.FingerprintOf(c)]
		f := m.fate(c, at, FateKept, "", c.NotAfter)
		f.elsewhere = opts.Domain.heldElsewhere(c, m.now)
		used := len(f.Dependents) > 0 || len(f.elsewhere) > 0
		retainEnd, unusedEnd := deadline(at, opts.RetainFor), time.Time{}
		// A render that sees its domain in part cannot know that nothing
		// chains to c: it starts no unused count (and keeps no record).
		if !used && opts.DropUnusedAfter > 0 && (opts.Domain == nil || opts.Domain.Whole()) {
			f.UnusedSince = m.target.unusedSince(c, at, m.now)
			unusedEnd = deadline(f.UnusedSince, opts.DropUnusedAfter)
		}
		switch {
		case !unusedEnd.IsZero() && m.now.After(unusedEnd):
			f.State, f.Reason, f.LeavesAt = FateDropped, droppedUnused, unusedEnd
		case !retainEnd.IsZero() && m.now.After(retainEnd):
			f.State, f.Reason, f.LeavesAt = FateDropped, droppedRetainFor, retainEnd
		case n >= opts.MaxPrevious:
			f.State, f.Reason, f.LeavesAt = FateDropped, droppedMaxPrevious, m.now
		default:
			n++
			f.why, f.LeavesAt = keptByMaxPrevious, earliest(c.NotAfter, retainEnd)
			if !retainEnd.IsZero() {
				f.why = keptByRetainFor
			}
			if !used {
				f.State, f.LeavesAt = FateUnused, earliest(f.LeavesAt, unusedEnd)
			}
		}
		if f.State == FateDropped && used && opts.ProtectIssuers {
			f.State, f.Reason = FateProtected, ""
		}
		if f.State == FateDropped && !opts.HoldUntil.IsZero() {
			f.State, f.Reason, f.why, f.LeavesAt = FateKept, "", keptByWaves, opts.HoldUntil.UTC()
		}
		if f.State != FateProtected && opts.Domain != nil && !opts.Domain.Whole() {
			// Certificates of the domain this render cannot see may
			// still chain to it: only its expiry, or a render that sees
			// the whole domain, ends it.
			f.State, f.Reason, f.why, f.LeavesAt = FateKept, "", keptByDomain, c.NotAfter.UTC()
		}
		f.Verdict = verdict(f, opts)
		fates = append(fates, f)
	}
	return fates
}

// deadline is from plus d, zero when d is not set.
func deadline(from time.Time, d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return from.Add(d).UTC()
}

// earliest returns the earliest of the non-zero times.
func earliest(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out.UTC()
}

// toCopy makes the outcome Copy mode's: the bundle is the current CAs
// alone, and the CAs Bundle mode would carry are remembered instead (they
// leave the bundle now).
func (out *Outcome) toCopy(opts Options, now time.Time) {
	out.Remembered, out.Previous = out.Previous, nil
	for i := range out.Fates {
		f := &out.Fates[i]
		if f.inBundle() {
			f.State, f.LeavesAt = FateRemembered, now.UTC()
			f.Verdict = verdict(*f, opts)
		}
	}
}

// verifies reports whether ca directly signed cert (signature and the CA's
// right to sign), the relation a trust bundle of issuing CAs relies on.
func verifies(ca, cert *x509.Certificate) bool {
	if len(ca.RawSubject) != len(cert.RawIssuer) || string(ca.RawSubject) != string(cert.RawIssuer) {
		return false
	}
	return cert.CheckSignatureFrom(ca) == nil
}

// NewVerifier returns a verifies that remembers its answers, for one run:
// the bundles of a policy often share previous CAs and leaves, and a
// signature check costs far more than a map lookup. Answers are keyed by
// the certificate pointers, not by hashes of the certificates: a run
// parses each distinct certificate once (pki.Cache), so the same
// certificate is the same pointer, and an equal certificate parsed twice
// only costs a second check.
func NewVerifier() func(ca, cert *x509.Certificate) bool { return newVerifier(verifies) }

// newVerifier is NewVerifier asking check for a pair it has not seen.
func newVerifier(check func(ca, cert *x509.Certificate) bool) func(ca, cert *x509.Certificate) bool {
	type pair struct{ ca, cert *x509.Certificate }
	seen := map[pair]bool{}
	return func(ca, cert *x509.Certificate) bool {
		if string(ca.RawSubject) != string(cert.RawIssuer) {
			return false
		}
		k := pair{ca, cert}
		ok, found := seen[k]
		if !found {
			ok = check(ca, cert)
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
