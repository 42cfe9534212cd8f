// Package report presents what `rotate-certs check` found: its report (a
// plain list of entries, re-issues, trust rows, waves and renewals) as a
// table, JSON or an SVG timeline. It finds nothing itself: the
// certificates come from package inventory, the re-issue list, the trust
// rows and the renewals from the rules (package why's typed values), the
// waves from package restart. Function mode's results are the function's
// own (package rotate).
package report

import (
	"cmp"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"github.com/rotate-certs/rotate-certs/fn/why"
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

// statusAt classifies an expiry at now. A threshold is inclusive: a
// certificate expiring exactly failWithin from now fails.
func statusAt(notAfter, now time.Time, warnWithin, failWithin time.Duration) Status {
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
	// typeCertificate is a certificate found in the input.
	typeCertificate EntryType = "certificate"
	// typeExpiry is an expiry date a controller reported, without the
	// certificate (Cluster API Machine, EKS Anywhere Cluster).
	typeExpiry EntryType = "expiry"
)

// Entry is one row of the expiry report. The renderers know nothing else:
// an Entry is plain data.
type Entry struct {
	Type EntryType
	// pkg is the package the resource belongs to (the directory of
	// its RotationPolicy), "" when no policy applies to it.
	pkg string
	// Resource is the object that holds the certificate or the date.
	Resource kube.Ref
	// key is the field path, with ":" and the path inside the value for a
	// kubeconfig: "data.tls.crt", "data.value:users[admin].user.client-certificate-data".
	key string
	// subject and issuer are RFC 2253 names; for an expiry, subject says
	// whose certificates the date is about and issuer is empty.
	subject string
	issuer  string
	// sha256 is the hex fingerprint of the DER (empty for an expiry).
	sha256 string
	// isCA marks CA certificates.
	isCA bool
	// notBefore is zero for an expiry.
	notBefore time.Time
	notAfter  time.Time
	// approximate marks a notAfter derived from a days-left count.
	approximate bool
	// DaysLeft is whole days from now to notAfter, rounded down.
	DaysLeft int
	Status   Status
}

// trustDetail is a trust row's explanation in words: where a current CA
// was read, or a previous CA's verdict, when it retired and how many
// certificates chain to it.
func trustDetail(t why.Trusted) string {
	if t.Reason == why.TrustSource {
		return "from " + t.Source
	}
	s := t.VerdictText
	if !t.RetiredAt.IsZero() {
		s += "; retired " + t.RetiredAt.UTC().Format(time.DateOnly)
	}
	if t.Reason == why.TrustRestored {
		s += " (restored from Copy-mode memory)"
	}
	if n := len(t.ChainedBy); n > 0 && !strings.HasPrefix(t.VerdictText, "kept (protected") {
		s += fmt.Sprintf("; %d certificate(s) chain to it", n)
	}
	return s
}

// ProblemEntry is certificate data that could not be read.
type ProblemEntry struct {
	pkg      string
	resource kube.Ref
	key      string
	message  string
}

// Report is the whole expiry report: what the renderers draw.
type Report struct {
	now        time.Time
	warnWithin time.Duration
	failWithin time.Duration
	// Entries are sorted by notAfter, then resource, key and fingerprint.
	Entries []Entry
	// reissues are sorted by IssuerLeavesAt, then resource and key.
	reissues []why.Reissue
	// trust lists, per bundle, each CA it holds and why (sortTrust order).
	trust    []why.Trusted
	Problems []ProblemEntry
	// Packages are the packages the report covers, in order, each with
	// its policies; empty when no policy was read.
	Packages []Package
	// Waves are the roll-outs of restarts in waves that are not done, by
	// package and bundle.
	Waves []restart.PendingWaves
	// Renewals are the cert-manager renewals of CAs the bundles read, by
	// date.
	Renewals []why.Renewal
	// Domains are the trust domains' progress (Domains), by name.
	Domains []Domain
}

// Package is a package as the report lists it: its directory and the
// policies that apply there.
type Package struct {
	Path     string
	Policies []kube.Ref
}

// InPackage labels every row of r with the package path p and returns r.
func (r Report) InPackage(p string) Report {
	r.eachPackage(func(pkg *string) { *pkg = p })
	return r
}

// eachPackage calls fn with the package field of every row of r.
func (r Report) eachPackage(fn func(pkg *string)) {
	for i := range r.Entries {
		fn(&r.Entries[i].pkg)
	}
	for i := range r.reissues {
		fn(&r.reissues[i].Package)
	}
	for i := range r.trust {
		fn(&r.trust[i].Package)
	}
	for i := range r.Problems {
		fn(&r.Problems[i].pkg)
	}
	for i := range r.Waves {
		fn(&r.Waves[i].Package)
	}
	for i := range r.Renewals {
		fn(&r.Renewals[i].Package)
	}
}

// Merge joins reports made at the same time with the same thresholds (one
// per package) into one, sorted as Build sorts.
func Merge(now time.Time, warnWithin, failWithin time.Duration, parts ...Report) Report {
	r := Report{now: now.UTC(), warnWithin: warnWithin, failWithin: failWithin}
	entries := 0
	for _, p := range parts {
		entries += len(p.Entries)
	}
	r.Entries = make([]Entry, 0, entries)
	for _, p := range parts {
		r.Entries = append(r.Entries, p.Entries...)
		r.reissues = append(r.reissues, p.reissues...)
		r.trust = append(r.trust, p.trust...)
		r.Problems = append(r.Problems, p.Problems...)
		r.Packages = append(r.Packages, p.Packages...)
		r.Waves = append(r.Waves, p.Waves...)
		r.Renewals = append(r.Renewals, p.Renewals...)
	}
	sortRenewals(r.Renewals)
	sortEntries(r.Entries)
	why.SortReissues(r.reissues)
	sortWaves(r.Waves)
	sortTrust(r.trust)
	return r
}

// multiPackage reports whether the rows come from more than one package
// (or from none and some): then each row must say which.
func (r Report) multiPackage() bool {
	seen := map[string]bool{}
	r.eachPackage(func(pkg *string) { seen[*pkg] = true })
	return len(seen) > 1
}

// Build turns an inventory (and the re-issue list and the trust of each
// bundle, if a policy was known) into a report at now.
func Build(inv *inventory.Inventory, reissues []why.Reissue, trust []why.Trusted, now time.Time, warnWithin, failWithin time.Duration) Report {
	r := Report{now: now.UTC(), warnWithin: warnWithin, failWithin: failWithin}
	for _, f := range inv.Certificates {
		c := f.Cert
		r.Entries = append(r.Entries, Entry{
			Type:      typeCertificate,
			Resource:  f.Ref,
			key:       f.Key(),
			subject:   pki.Subject(c),
			issuer:    issuerName(c),
			sha256:    pki.FingerprintOf(c).String(),
			isCA:      pki.IsCA(c),
			notBefore: c.NotBefore.UTC(),
			notAfter:  c.NotAfter.UTC(),
			DaysLeft:  pki.DaysLeft(c, now),
			Status:    statusAt(c.NotAfter, now, warnWithin, failWithin),
		})
	}
	for _, e := range inv.Expiries {
		at := e.At(now).UTC()
		r.Entries = append(r.Entries, Entry{
			Type:        typeExpiry,
			Resource:    e.Ref,
			key:         e.Field,
			subject:     e.Subject,
			notAfter:    at,
			approximate: e.Approximate(),
			DaysLeft:    pki.DaysUntil(at, now),
			Status:      statusAt(at, now, warnWithin, failWithin),
		})
	}
	sortEntries(r.Entries)
	for _, p := range inv.Problems {
		r.Problems = append(r.Problems, ProblemEntry{resource: p.Ref, key: p.Field, message: p.Message})
	}
	r.reissues = append(r.reissues, reissues...)
	why.SortReissues(r.reissues)
	r.trust = append(r.trust, trust...)
	sortTrust(r.trust)
	return r
}

// sortEntries orders entries by expiry, then package, resource, key and
// fingerprint. Each comparison stops at the first field that differs and
// allocates nothing: a fleet's report sorts hundreds of thousands of rows.
func sortEntries(es []Entry) {
	slices.SortStableFunc(es, func(a, b Entry) int {
		if c := a.notAfter.Compare(b.notAfter); c != 0 {
			return c
		}
		if c := strings.Compare(a.pkg, b.pkg); c != 0 {
			return c
		}
		if c := compareRefs(a.Resource, b.Resource); c != 0 {
			return c
		}
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.sha256, b.sha256)
	})
}

// compareRefs orders resources as their refKey would, without building it.
func compareRefs(a, b kube.Ref) int {
	return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// sortTrust orders trust rows by package, bundle and target, then current
// CAs (in their order) before previous ones, then by retirement, most
// recent first, and SHA-256. The order within a target is kept stable.
func sortTrust(ts []why.Trusted) {
	slices.SortStableFunc(ts, func(a, b why.Trusted) int {
		return cmp.Or(
			cmp.Compare(a.Package, b.Package),
			cmp.Compare(a.Bundle, b.Bundle),
			cmp.Compare(a.Target.String(), b.Target.String()),
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

// Counts are the report's totals (the JSON report's "summary").
type Counts struct {
	Certificates int `json:"certificates"`
	Expiries     int `json:"expiries"`
	OK           int `json:"ok"`
	Warn         int `json:"warn"`
	Fail         int `json:"fail"`
	Expired      int `json:"expired"`
	Problems     int `json:"problems"`
	Reissues     int `json:"reissues"`
}

// Counts adds up the entries by type and status.
func (r Report) Counts() Counts {
	c := Counts{Problems: len(r.Problems), Reissues: len(r.reissues)}
	for _, e := range r.Entries {
		if e.Type == typeCertificate {
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
