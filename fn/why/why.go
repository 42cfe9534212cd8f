// Package why is what the rules say about a package beyond the objects
// they write, as typed values: why each target of a trust bundle holds
// each CA (Trusted), the certificates to re-issue (Reissue) and the
// cert-manager renewals of the CAs the bundles read (Renewal). Every
// place is addressed by its object's key and field path (Address), never
// by the words a report shows it in: `rotate` writes these values, the
// report of `check` shows them and the model of `diff` joins them to the
// objects it reads by their address.
package why

import (
	"cmp"
	"slices"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// Address is a value of an object: the object's key (kind, namespace -
// none for a cluster-scoped kind - and name) and the field path of the
// value ("data.ca.crt", "webhooks[name=a].clientConfig.caBundle").
type Address struct {
	Key   kube.Key
	Field string
}

// String names the value for messages and tables: "Secret ns/name
// data.ca.crt".
func (a Address) String() string { return a.Key.String() + " " + a.Field }

// TrustReason says why a bundle holds a CA.
type TrustReason string

// Trust reasons.
const (
	// TrustSource: current, read from a source of the bundle (or of
	// another bundle of its trust domain).
	TrustSource TrustReason = "source"
	// TrustCarried: a previous CA, carried from the target's own data.
	TrustCarried TrustReason = "carried"
	// TrustRestored: a previous CA restored from the Copy-mode memory of
	// the target (its rotate-certs.dev/previous annotation).
	TrustRestored TrustReason = "restored"
)

// Trusted is one CA of one trust bundle, and why the bundle holds it: its
// source, or, for a previous CA, its retirement and verdict (which may be
// that this render drops it).
type Trusted struct {
	Package string
	Bundle  string
	// Target is where the bundle is written; Targets counts the targets
	// that agree on this row (a bundle fanned out to many namespaces),
	// Target being the first and Others the rest, in the order the
	// bundle writes them.
	Target  Address
	Targets int
	Others  []Address
	Subject string
	SHA256  string
	// NotAfter is the CA's expiry.
	NotAfter time.Time
	Reason   TrustReason
	// Source is where a current CA was read.
	Source string
	// RetiredAt is when a previous CA stopped being current.
	RetiredAt time.Time
	// Verdict is a previous CA's verdict word (kept, drops, unused,
	// dropped, remembered), VerdictText the whole phrase, and LeavesAt
	// the date it names (zero when none).
	Verdict     string
	VerdictText string
	LeavesAt    time.Time
	// ChainedBy are where the certificates that chain only to a previous
	// CA are held.
	ChainedBy []string
}

// ReissueState says how urgent a re-issue is.
type ReissueState string

// Re-issue states.
const (
	// ReissuePending: the CA it needs is still in the bundle and leaves
	// at IssuerLeavesAt.
	ReissuePending ReissueState = "pending"
	// ReissueProtected: the CA it needs is past the date the retain
	// policy would drop it and stays only because retain.protectIssuers
	// keeps it for this certificate.
	ReissueProtected ReissueState = "protected"
	// ReissueBroken: the CA it needs has left the bundle or expired (or an
	// intermediate of its chain expired): peers that trust only this
	// bundle reject it now.
	ReissueBroken ReissueState = "broken"
)

// Reissue is a certificate of the input - a leaf, or an issuer or
// intermediate CA - that chains only to a previous CA of a trust bundle,
// or whose CA has left the bundle: it must be re-issued from a current CA
// before (or since) that CA leaves the bundle.
type Reissue struct {
	// Package is the package of the policy that reports it.
	Package string
	// Resource and Key locate the certificate.
	Resource kube.Ref
	Key      string
	Subject  string
	SHA256   string
	// IsCA marks an issuer or intermediate (a CA certificate a CA of the
	// bundle signed), as opposed to a leaf.
	IsCA     bool
	NotAfter time.Time
	// Bundle is the trust bundle's name.
	Bundle string
	// Issuer and IssuerSHA256 identify the CA it needs: the previous CA
	// its chain ends at, or the CA that left or expired. IssuerSHA256 is
	// empty when the input does not hold that CA.
	Issuer       string
	IssuerSHA256 string
	// IssuerExpired says the CA it needs has expired.
	IssuerExpired bool
	// IssuerLeavesAt is when that CA leaves the bundle (its NotAfter, or
	// the retain.for deadline if that is earlier); for a protected one
	// when the policy would have dropped it; for a broken one when it left
	// or expired (the time of the report when that is not known).
	IssuerLeavesAt time.Time
	// DaysLeft is whole days from now to IssuerLeavesAt.
	DaysLeft int
	State    ReissueState
	// Certificate is the cert-manager Certificate ("namespace/name")
	// whose Secret holds the certificate (its
	// cert-manager.io/certificate-name annotation), and Command the
	// command that renews it; both empty otherwise.
	Certificate string
	Command     string
}

// SortReissues orders re-issues by when the issuer leaves, then by
// package, where the leaf is, then by bundle.
func SortReissues(rs []Reissue) {
	slices.SortStableFunc(rs, func(a, b Reissue) int {
		return cmp.Or(
			a.IssuerLeavesAt.Compare(b.IssuerLeavesAt),
			cmp.Compare(a.Package, b.Package),
			cmp.Compare(refKey(a.Resource), refKey(b.Resource)),
			cmp.Compare(a.Key, b.Key),
			cmp.Compare(a.Bundle, b.Bundle),
		)
	})
}

// refKey is the order of resources in sorted rows: kind, namespace, name.
func refKey(r kube.Ref) string { return r.Kind + "\x00" + r.Namespace + "\x00" + r.Name }

// Renewal is a cert-manager CA Certificate whose Secret a trust bundle
// reads, and when cert-manager renews it, foreseen from the CA the
// Secret holds (the one the render saw).
type Renewal struct {
	Package     string
	Certificate kube.Ref
	Bundle      string
	// Source is the bundle source the Certificate writes.
	Source string
	// SHA256 and NotAfter are the CA's.
	SHA256   string
	NotAfter time.Time
	// RenewsAt is cert-manager's renewal time (zero when Disabled), Rule
	// the rule that set it.
	RenewsAt time.Time
	Rule     string
	Disabled bool
	// Windows: spec.renewal.windows may defer it, never earlier.
	Windows bool
	// NewKey: the renewal makes a new key (rotationPolicy Always).
	NewKey bool
}

// Renewal states, as check shows them.
const (
	renewalDisabled = "disabled"
	renewalPast     = "past: snapshot and render"
	renewalDue      = "due soon"
	renewalLater    = "later"
)

// State says where the renewal stands at now: past (the cluster likely
// holds a new CA), due within warnWithin, later, or disabled.
func (x Renewal) State(now time.Time, warnWithin time.Duration) string {
	switch {
	case x.Disabled:
		return renewalDisabled
	case !x.RenewsAt.After(now):
		return renewalPast
	case !now.Before(x.RenewsAt.Add(-warnWithin)):
		return renewalDue
	}
	return renewalLater
}
