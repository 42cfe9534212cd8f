package bundle

import (
	"crypto/x509"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// ReissueState says where a leaf's issuer stands in the bundle.
type ReissueState string

// Re-issue states.
const (
	// IssuerPending: the issuer is a kept previous CA and leaves at
	// LeavesAt.
	IssuerPending ReissueState = "pending"
	// IssuerProtected: the issuer stays only because protectIssuers keeps
	// it for a leaf; the retain policy would already have dropped it.
	IssuerProtected ReissueState = "protected"
	// IssuerDropped: the issuer left the bundle in this render
	// (protectIssuers is off, or Copy mode); the leaf no longer verifies
	// against it.
	IssuerDropped ReissueState = "dropped"
)

// Reissue is a valid leaf that verifies against a previous CA of the
// bundle and against none of its current CAs: a certificate that must be
// re-issued from a current CA before its issuer leaves the bundle.
type Reissue struct {
	Leaf   Leaf
	Issuer *x509.Certificate
	// LeavesAt is when the retain policy drops the issuer: its NotAfter,
	// or the retain.for deadline (its retirement plus retain.for) when
	// that is earlier. For a protected or dropped issuer it is the date
	// the policy let it go (now when it went for exceeding maxPrevious,
	// and in Copy mode).
	LeavesAt time.Time
	State    ReissueState
}

// Reissues lists the leaves of the input that depend on a previous CA of
// the outcome, one entry per leaf and issuer, in previous-CA order then
// leaf order. leaves, opts and now must be those the outcome was merged
// with. In Copy mode every previous CA leaves the bundle, so every valid
// leaf that only a previous CA verifies is listed, as dropped now.
func (o Outcome) Reissues(leaves *LeafIndex, opts Options, now time.Time) []Reissue {
	verify := opts.Verify
	if verify == nil {
		verify = Verifies
	}
	var out []Reissue
	add := func(ca *x509.Certificate, at time.Time, state ReissueState) {
		for _, l := range leaves.dependents(ca, o.Current, now, verify) {
			out = append(out, Reissue{Leaf: l, Issuer: ca, LeavesAt: at, State: state})
		}
	}
	if opts.Copy {
		for _, d := range o.Decisions {
			if d.Reason == DroppedCopyMode || d.Reason == RememberedCopyMode {
				add(d.Cert, now, IssuerDropped)
			}
		}
		return out
	}
	// deadline is when retain.for lets ca go, zero without retain.for.
	deadline := func(ca *x509.Certificate) time.Time {
		if opts.RetainFor <= 0 {
			return time.Time{}
		}
		at, _ := o.RetiredAt(ca)
		return at.Add(opts.RetainFor)
	}
	policyDate := func(ca *x509.Certificate) time.Time {
		if d := deadline(ca); !d.IsZero() && d.Before(ca.NotAfter) {
			return d
		}
		return ca.NotAfter
	}
	overdueDate := func(ca *x509.Certificate) time.Time {
		if d := deadline(ca); !d.IsZero() && now.After(d) {
			return d
		}
		return now
	}
	protected := pki.NewSet()
	var droppedCAs []*x509.Certificate
	for _, d := range o.Decisions {
		switch d.Reason {
		case KeptProtected:
			protected.Add(d.Cert)
		case DroppedRetainFor, DroppedMaxPrevious:
			droppedCAs = append(droppedCAs, d.Cert)
		}
	}
	for _, ca := range o.Previous {
		if protected.Has(ca) {
			add(ca, overdueDate(ca), IssuerProtected)
		} else {
			add(ca, policyDate(ca), IssuerPending)
		}
	}
	for _, ca := range droppedCAs {
		add(ca, overdueDate(ca), IssuerDropped)
	}
	return out
}
