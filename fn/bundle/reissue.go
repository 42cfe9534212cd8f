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
	// (protectIssuers is off); the leaf no longer verifies against it.
	IssuerDropped ReissueState = "dropped"
)

// Reissue is a valid leaf that verifies against a previous CA of the
// bundle and against none of its current CAs: a certificate that must be
// re-issued from a current CA before its issuer leaves the bundle.
type Reissue struct {
	Leaf   Leaf
	Issuer *x509.Certificate
	// LeavesAt is when the retain policy drops the issuer: its NotAfter,
	// or the retain.for deadline when that is earlier. For a protected or
	// dropped issuer it is the date the policy let it go (now when it went
	// for exceeding maxPrevious).
	LeavesAt time.Time
	State    ReissueState
}

// Reissues lists the leaves of the input that depend on a previous CA of
// the outcome, one entry per leaf and issuer, in previous-CA order then
// leaf order. leaves, opts and now must be those the outcome was merged
// with.
func (o Outcome) Reissues(leaves *LeafIndex, opts Options, now time.Time) []Reissue {
	if opts.Copy {
		return nil
	}
	retireAt := time.Time{}
	if opts.RetainFor > 0 {
		retireAt = o.LatestNotBefore().Add(opts.RetainFor)
	}
	policyDate := func(ca *x509.Certificate) time.Time {
		if !retireAt.IsZero() && retireAt.Before(ca.NotAfter) {
			return retireAt
		}
		return ca.NotAfter
	}
	overdueDate := func() time.Time {
		if !retireAt.IsZero() && now.After(retireAt) {
			return retireAt
		}
		return now
	}
	protected, dropped := pki.NewSet(), pki.NewSet()
	var droppedCAs []*x509.Certificate
	for _, d := range o.Decisions {
		switch d.Reason {
		case KeptProtected:
			protected.Add(d.Cert)
		case DroppedRetainFor, DroppedMaxPrevious:
			if dropped.Add(d.Cert) {
				droppedCAs = append(droppedCAs, d.Cert)
			}
		}
	}
	verify := opts.Verify
	if verify == nil {
		verify = Verifies
	}
	var out []Reissue
	for _, ca := range o.Previous {
		state, at := IssuerPending, policyDate(ca)
		if protected.Has(ca) {
			state, at = IssuerProtected, overdueDate()
		}
		for _, l := range leaves.dependents(ca, o.Current, now, verify) {
			out = append(out, Reissue{Leaf: l, Issuer: ca, LeavesAt: at, State: state})
		}
	}
	for _, ca := range droppedCAs {
		for _, l := range leaves.dependents(ca, o.Current, now, verify) {
			out = append(out, Reissue{Leaf: l, Issuer: ca, LeavesAt: overdueDate(), State: IssuerDropped})
		}
	}
	return out
}
