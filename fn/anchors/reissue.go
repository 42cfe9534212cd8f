package anchors

import (
	"crypto/x509"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// ReissueState says where the CA a certificate needs stands in the bundle.
type ReissueState string

// Re-issue states.
const (
	// IssuerPending: the CA is a kept previous CA and leaves at LeavesAt.
	IssuerPending ReissueState = "pending"
	// IssuerProtected: the CA stays only because protectIssuers keeps it
	// for this certificate; the retain policy would already have dropped
	// it (at LeavesAt).
	IssuerProtected ReissueState = "protected"
	// IssuerBroken: the CA has left the bundle (at this render or before:
	// protectIssuers is off, Copy mode, it expired) or an intermediate on
	// the chain expired; the certificate verifies against nothing the
	// bundle trusts.
	IssuerBroken ReissueState = "broken"
)

// Reissue is a valid certificate of the input (a leaf or an intermediate)
// that chains only to a previous CA of the bundle, or to a CA that has
// left it: a certificate to re-issue from a current CA before (or since)
// that CA leaves the bundle.
type Reissue struct {
	Cert Held
	// Issuer is the CA it needs: the previous CA (the root of its chain),
	// or for a broken chain the CA that left or expired. Nil when the
	// input does not hold that CA; IssuerName names it then.
	Issuer     *x509.Certificate
	IssuerName string
	// LeavesAt is when the CA leaves the bundle (see Fate.LeavesAt); for a
	// broken entry when it left, or expired; now when that is not known.
	LeavesAt time.Time
	State    ReissueState
}

// Broken is a certificate that verifies against nothing the bundle trusts
// because a CA on its chain left the bundle or expired.
type Broken struct {
	Cert Held
	// issuer is the CA that left or expired (nil when the input does not
	// hold it; issuerName names it).
	issuer     *x509.Certificate
	issuerName string
	// leftAt is when it left or expired (now when not known).
	leftAt time.Time
}

// Reissues lists the certificates of the input that need a previous CA of
// the outcome or have lost their CA: one entry per certificate and CA, in
// fate order then input order, broken ones last. It is a projection of
// the fates: the dates are the ones the merge applied.
func (o Outcome) Reissues() []Reissue {
	var out []Reissue
	kept := map[int]bool{}
	for _, f := range o.Fates {
		state := IssuerPending
		switch f.State {
		case FateProtected:
			state = IssuerProtected
		case FateDropped, FateRemembered:
			continue
		}
		for _, d := range f.Dependents {
			kept[d.ID] = true
			out = append(out, Reissue{Cert: d, Issuer: f.Cert, IssuerName: pki.Subject(f.Cert), LeavesAt: f.LeavesAt, State: state})
		}
	}
	for _, f := range o.Fates {
		if f.inBundle() {
			continue
		}
		for _, d := range f.Dependents {
			if !kept[d.ID] {
				out = append(out, Reissue{Cert: d, Issuer: f.Cert, IssuerName: pki.Subject(f.Cert), LeavesAt: f.LeavesAt, State: IssuerBroken})
			}
		}
	}
	for _, b := range o.Broken {
		out = append(out, Reissue{Cert: b.Cert, Issuer: b.issuer, IssuerName: b.issuerName, LeavesAt: b.leftAt, State: IssuerBroken})
	}
	return out
}

// broken finds the certificates of the input that a CA of the bundle
// issued or named but that verify against nothing the bundle trusts now,
// beyond the dependents of the dropped fates: those of an expired current
// CA, those below an intermediate that expired, and those that name a
// trusted CA as their issuer but were signed by another key of that name
// (a CA replaced under the same subject, which left the bundle at an
// earlier render).
func (m *merger) broken(out Outcome, now time.Time) []Broken {
	trusted := append(append([]*x509.Certificate(nil), out.Current...), out.Previous...)
	var gone []*x509.Certificate
	for _, d := range out.decisions {
		if d.reason == droppedExpiredCurrent {
			gone = append(gone, d.cert)
		}
	}
	x := m.chains
	k := brokenKey{trusted: x.key(trusted), bundle: m.allKey, gone: x.key(gone), now: now.UnixNano()}
	all, ok := x.broken[k]
	if !ok {
		b := &brokenList{m: m, roots: x.rootSet(trusted), counted: map[int]bool{}, now: now}
		for _, c := range gone {
			b.below(c, pki.Subject(c), c.NotAfter, c)
		}
		b.expiredIntermediates()
		b.sameName(trusted)
		all = b.res
		x.broken[k] = all
	}
	if len(all) == 0 {
		return nil
	}
	// The dependents of the dropped fates are listed with their fate.
	counted := map[int]bool{}
	for _, f := range out.Fates {
		for _, d := range f.Dependents {
			counted[d.ID] = true
		}
	}
	var res []Broken
	for _, b := range all {
		if !counted[b.Cert.ID] {
			res = append(res, b)
		}
	}
	return res
}

// brokenKey identifies one broken computation: the trusted CAs, every CA
// of the target, the expired current CAs and the time.
type brokenKey struct {
	trusted, bundle, gone string
	now                   int64
}

// brokenList gathers the broken certificates of one outcome, each place
// once.
type brokenList struct {
	m       *merger
	roots   *rootSet
	counted map[int]bool
	now     time.Time
	res     []Broken
}

// add records h as broken unless it is counted already, a chain copy, or
// still chains to a trusted CA.
func (b *brokenList) add(h Held, issuer *x509.Certificate, name string, left time.Time) {
	if b.counted[h.ID] || h.Supplied || b.m.chains.chainsToAny(h.Cert, b.roots, b.now) {
		return
	}
	b.counted[h.ID] = true
	b.res = append(b.res, Broken{Cert: h, issuer: issuer, issuerName: name, leftAt: left.UTC()})
}

// below records the valid certificates that chain down from ca.
func (b *brokenList) below(issuer *x509.Certificate, name string, left time.Time, ca *x509.Certificate) {
	b.m.chains.descend([]*x509.Certificate{ca}, b.now, func(i int) bool {
		h := b.m.chains.held[i]
		if b.m.all.Has(h.Cert) || pki.Expired(h.Cert, b.now) {
			return false
		}
		b.add(h, issuer, name, left)
		return true
	})
}

// expiredIntermediates records the certificates below each intermediate of
// the input that has expired but whose own chain reaches a trusted CA.
func (b *brokenList) expiredIntermediates() {
	x := b.m.chains
	for _, i := range x.intermediates {
		e := x.held[i].Cert
		if !pki.Expired(e, b.now) || x.isRoot(e) || b.m.all.Has(e) || !x.chainsToAny(e, b.roots, b.now) {
			continue
		}
		b.below(e, pki.Subject(e), e.NotAfter, e)
	}
}

// sameName records the certificates that name a trusted CA as their issuer
// but that no CA of that name in the bundle signed, and what chains down
// from them: they were issued by a CA of the same subject that has left
// the bundle.
func (b *brokenList) sameName(trusted []*x509.Certificate) {
	x := b.m.chains
	names := map[string]bool{}
	for _, t := range trusted {
		if names[string(t.RawSubject)] {
			continue
		}
		names[string(t.RawSubject)] = true
		for _, i := range x.byIssuer[string(t.RawSubject)] {
			h := x.held[i]
			c := h.Cert
			if pki.Expired(c, b.now) || b.m.all.Has(c) || namesTrustedKey(c, b.roots) || x.isRoot(c) || x.chainsToAny(c, b.roots, b.now) {
				continue
			}
			issuer, name, left := x.issuerOf(c), pki.Subject(t), b.now
			if issuer != nil {
				name = pki.Subject(issuer)
				if pki.Expired(issuer, b.now) {
					left = issuer.NotAfter
				}
			}
			b.add(h, issuer, name, left)
			if pki.IsCA(c) {
				b.below(issuer, name, left, c)
			}
		}
	}
}

// namesTrustedKey reports whether c's authority key identifier is the
// subject key identifier of a trusted CA of its issuer's name: it says a
// trusted CA signed it, and the signature is checked where that matters
// (its chain), not here, for every certificate a current CA issued.
func namesTrustedKey(c *x509.Certificate, roots *rootSet) bool {
	if len(c.AuthorityKeyId) == 0 {
		return false
	}
	for _, r := range roots.bySubject[string(c.RawIssuer)] {
		if string(r.SubjectKeyId) == string(c.AuthorityKeyId) {
			return true
		}
	}
	return false
}
