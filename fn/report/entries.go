package report

import (
	"cmp"
	"crypto/x509"
	"slices"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Status is where an expiry stands against the thresholds.
type Status string

// Statuses, from good to bad.
const (
	// StatusOK: expires after warnWithin.
	StatusOK Status = "ok"
	// StatusWarn: expires within warnWithin.
	StatusWarn Status = "warn"
	// StatusFail: expires within failWithin; `check` exits 1.
	StatusFail Status = "fail"
	// StatusExpired: already expired; `check` exits 1.
	StatusExpired Status = "expired"
)

// StatusAt classifies an expiry at now. A threshold is inclusive: a
// certificate expiring exactly failWithin from now fails.
func StatusAt(notAfter, now time.Time, warnWithin, failWithin time.Duration) Status {
	left := notAfter.Sub(now)
	switch {
	case left < 0:
		return StatusExpired
	case left <= failWithin:
		return StatusFail
	case left <= warnWithin:
		return StatusWarn
	default:
		return StatusOK
	}
}

// EntryType says what an entry is.
type EntryType string

// Entry types.
const (
	// TypeCertificate is a certificate found in the input.
	TypeCertificate EntryType = "certificate"
	// TypeExpiry is an expiry date a controller reported, without the
	// certificate (Cluster API Machine, EKS Anywhere Cluster).
	TypeExpiry EntryType = "expiry"
)

// Entry is one row of the expiry report. The renderers know nothing else:
// an Entry is plain data.
type Entry struct {
	Type EntryType
	// Package is the package the resource belongs to (the directory of
	// its RotationPolicy), "" when no policy applies to it.
	Package string
	// Resource is the object that holds the certificate or the date.
	Resource kube.Ref
	// Key is the field path, with ":" and the path inside the value for a
	// kubeconfig: "data.tls.crt", "data.value:users[admin].user.client-certificate-data".
	Key string
	// Subject and Issuer are RFC 2253 names; for an expiry, Subject says
	// whose certificates the date is about and Issuer is empty.
	Subject string
	Issuer  string
	// SHA256 is the hex fingerprint of the DER (empty for an expiry).
	SHA256 string
	// IsCA marks CA certificates.
	IsCA bool
	// NotBefore is zero for an expiry.
	NotBefore time.Time
	NotAfter  time.Time
	// Approximate marks a NotAfter derived from a days-left count.
	Approximate bool
	// DaysLeft is whole days from now to NotAfter, rounded down.
	DaysLeft int
	Status   Status
}

// Short returns the first 12 hex digits of the fingerprint, or "-".
func (e Entry) Short() string {
	if len(e.SHA256) < 12 {
		return "-"
	}
	return e.SHA256[:12]
}

// ReissueState says how urgent a re-issue is.
type ReissueState string

// Re-issue states.
const (
	// ReissuePending: the issuer is still in the bundle and leaves at
	// IssuerLeavesAt.
	ReissuePending ReissueState = "pending"
	// ReissueProtected: the issuer is past the date the retain policy
	// would drop it and stays only because retain.protectIssuers keeps it
	// for this leaf.
	ReissueProtected ReissueState = "protected"
	// ReissueDropped: the issuer has left the bundle; peers that trust
	// only this bundle reject the leaf now.
	ReissueDropped ReissueState = "dropped"
)

// Reissue is a leaf whose issuer is only among a trust bundle's previous
// CAs: it must be re-issued from a current CA before its issuer leaves the
// bundle.
type Reissue struct {
	// Package is the package of the policy that reports it.
	Package string
	// Resource and Key locate the leaf.
	Resource kube.Ref
	Key      string
	Subject  string
	SHA256   string
	NotAfter time.Time
	// Bundle is the trust bundle's name.
	Bundle string
	// Issuer and IssuerSHA256 identify the previous CA that signed it.
	Issuer       string
	IssuerSHA256 string
	// IssuerLeavesAt is when the retain policy drops the issuer from the
	// bundle: its NotAfter, or the retain.for deadline if that is earlier.
	IssuerLeavesAt time.Time
	// DaysLeft is whole days from now to IssuerLeavesAt.
	DaysLeft int
	State    ReissueState
}

// ProblemEntry is certificate data that could not be read.
type ProblemEntry struct {
	Package  string
	Resource kube.Ref
	Key      string
	Message  string
}

// Report is the whole expiry report: what the renderers draw.
type Report struct {
	Now        time.Time
	WarnWithin time.Duration
	FailWithin time.Duration
	// Entries are sorted by NotAfter, then resource, key and fingerprint.
	Entries []Entry
	// Reissues are sorted by IssuerLeavesAt, then resource and key.
	Reissues []Reissue
	Problems []ProblemEntry
	// Packages are the packages the report covers, in order, each with
	// its policies; empty when no policy was read.
	Packages []Package
	// Waves are the roll-outs of restarts in waves that are not done, by
	// package and bundle.
	Waves []PendingWaves
}

// Package is a package as the report lists it: its directory and the
// policies that apply there.
type Package struct {
	Path     string
	Policies []kube.Ref
}

// InPackage labels every row of r with the package path p and returns r.
func (r Report) InPackage(p string) Report {
	for i := range r.Entries {
		r.Entries[i].Package = p
	}
	for i := range r.Reissues {
		r.Reissues[i].Package = p
	}
	for i := range r.Waves {
		r.Waves[i].Package = p
	}
	for i := range r.Problems {
		r.Problems[i].Package = p
	}
	return r
}

// Merge joins reports made at the same time with the same thresholds (one
// per package) into one, sorted as Build sorts.
func Merge(now time.Time, warnWithin, failWithin time.Duration, parts ...Report) Report {
	r := Report{Now: now.UTC(), WarnWithin: warnWithin, FailWithin: failWithin}
	for _, p := range parts {
		r.Entries = append(r.Entries, p.Entries...)
		r.Reissues = append(r.Reissues, p.Reissues...)
		r.Problems = append(r.Problems, p.Problems...)
		r.Packages = append(r.Packages, p.Packages...)
		r.Waves = append(r.Waves, p.Waves...)
	}
	sortEntries(r.Entries)
	SortReissues(r.Reissues)
	sortWaves(r.Waves)
	return r
}

// MultiPackage reports whether the rows come from more than one package
// (or from none and some): then each row must say which.
func (r Report) MultiPackage() bool {
	seen := map[string]bool{}
	for _, e := range r.Entries {
		seen[e.Package] = true
	}
	for _, x := range r.Reissues {
		seen[x.Package] = true
	}
	for _, p := range r.Problems {
		seen[p.Package] = true
	}
	for _, w := range r.Waves {
		seen[w.Package] = true
	}
	return len(seen) > 1
}

// Build turns an inventory (and the re-issue list, if a policy was known)
// into a report at now.
func Build(inv *Inventory, reissues []Reissue, now time.Time, warnWithin, failWithin time.Duration) Report {
	r := Report{Now: now.UTC(), WarnWithin: warnWithin, FailWithin: failWithin}
	for _, f := range inv.Certificates {
		c := f.Cert
		r.Entries = append(r.Entries, Entry{
			Type:      TypeCertificate,
			Resource:  f.Ref,
			Key:       f.Key(),
			Subject:   pki.Subject(c),
			Issuer:    issuerName(c),
			SHA256:    pki.FingerprintOf(c).String(),
			IsCA:      pki.IsCA(c),
			NotBefore: c.NotBefore.UTC(),
			NotAfter:  c.NotAfter.UTC(),
			DaysLeft:  pki.DaysLeft(c, now),
			Status:    StatusAt(c.NotAfter, now, warnWithin, failWithin),
		})
	}
	for _, e := range inv.Expiries {
		at := e.At(now).UTC()
		r.Entries = append(r.Entries, Entry{
			Type:        TypeExpiry,
			Resource:    e.Ref,
			Key:         e.Field,
			Subject:     e.Subject,
			NotAfter:    at,
			Approximate: e.Approximate(),
			DaysLeft:    DaysLeft(at, now),
			Status:      StatusAt(at, now, warnWithin, failWithin),
		})
	}
	sortEntries(r.Entries)
	for _, p := range inv.Problems {
		r.Problems = append(r.Problems, ProblemEntry{Resource: p.Ref, Key: p.Field, Message: p.Message})
	}
	r.Reissues = append(r.Reissues, reissues...)
	SortReissues(r.Reissues)
	return r
}

// sortEntries orders entries by expiry, then package, resource, key and
// fingerprint.
func sortEntries(es []Entry) {
	slices.SortStableFunc(es, func(a, b Entry) int {
		return cmp.Or(
			a.NotAfter.Compare(b.NotAfter),
			cmp.Compare(a.Package, b.Package),
			cmp.Compare(refKey(a.Resource), refKey(b.Resource)),
			cmp.Compare(a.Key, b.Key),
			cmp.Compare(a.SHA256, b.SHA256),
		)
	})
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

func refKey(r kube.Ref) string { return r.Kind + "\x00" + r.Namespace + "\x00" + r.Name }

// issuerName returns the issuer in RFC 2253 form, or "-" when empty.
func issuerName(c *x509.Certificate) string {
	if s := c.Issuer.String(); s != "" {
		return s
	}
	return "-"
}

// Counts are the report's totals.
type Counts struct {
	Certificates int
	Expiries     int
	OK           int
	Warn         int
	Fail         int
	Expired      int
	Problems     int
	Reissues     int
}

// Counts adds up the entries by type and status.
func (r Report) Counts() Counts {
	c := Counts{Problems: len(r.Problems), Reissues: len(r.Reissues)}
	for _, e := range r.Entries {
		if e.Type == TypeCertificate {
			c.Certificates++
		} else {
			c.Expiries++
		}
		switch e.Status {
		case StatusOK:
			c.OK++
		case StatusWarn:
			c.Warn++
		case StatusFail:
			c.Fail++
		case StatusExpired:
			c.Expired++
		}
	}
	return c
}

// Failing reports whether anything is inside failWithin or expired: the
// condition on which `check` exits 1.
func (r Report) Failing() bool {
	c := r.Counts()
	return c.Fail+c.Expired > 0
}
