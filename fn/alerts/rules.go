// Package alerts builds the PrometheusRule of spec.alerts: one alert per
// certificate a policy trusts or watches, firing at fixed unix times
// derived from the certificate's NotAfter, and one per certificate to
// re-issue, firing at the date the CA it needs leaves its bundle. The
// expressions read no metric at all - only time() - so the rule fires on
// any Prometheus that loads it, whether or not CI ever renders again, and
// needs no exporter.
//
// The alert model, for a date N (unix seconds: the certificate's NotAfter,
// or the date its CA leaves the bundle) and thresholds W = warnWithin,
// F = failWithin (seconds):
//
//	warning:  (vector(N - time()) <= W) > F   fires on [N-W, N-F)
//	critical:  vector(N - time()) <= F        fires from N-F on, also after expiry
//
// The value of both is the number of seconds left (negative once expired),
// which the description shows. The warning stops when the critical alert
// starts, so no inhibition rule is needed. Rules and groups are sorted, so
// the same certificates always give the same bytes.
package alerts

import (
	"cmp"
	"crypto/x509"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// AlertName is the name of every alert; severity, bundle and fingerprint
// tell them apart.
const AlertName = "RotateCertsCertificateExpiry"

// Roles of a certificate in a bundle.
const (
	// RoleCA is a certificate held in the trust bundle.
	RoleCA = "ca"
	// RoleLeaf is a leaf of the input that chains to a CA of the bundle.
	RoleLeaf = "leaf"
	// RoleIssuer is an issuer or intermediate CA of the input that chains
	// to a CA of the bundle.
	RoleIssuer = "issuer"
	// RoleReissue is a certificate on the re-issue list: its alert fires
	// at the date the CA it needs leaves the bundle (Due), not at its own
	// NotAfter.
	RoleReissue = "reissue"
)

// Certificate is one certificate to alert on, in one bundle.
type Certificate struct {
	Cert   *x509.Certificate
	Bundle string
	Role   string
	// Where lists the places it was found ("Secret ns/name data.ca.crt").
	Where []string
	// For RoleReissue: the CA it needs (subject and SHA-256 hex, which may
	// be empty when the input does not hold that CA) and when that CA
	// leaves the bundle.
	Issuer, IssuerSHA256 string
	Due                  time.Time
}

// at is the date the certificate's alert counts down to.
func (c Certificate) at() time.Time {
	if c.Role == RoleReissue {
		return c.Due
	}
	return c.Cert.NotAfter
}

// rank orders roles in a group: the bundle's CAs first, then what chains
// to them, then the re-issue alerts.
func rank(role string) int {
	switch role {
	case RoleCA:
		return 0
	case RoleReissue:
		return 2
	}
	return 1
}

// Rule is one alerting rule, as Prometheus reads it.
type Rule struct {
	Alert       string            `yaml:"alert" json:"alert"`
	Expr        string            `yaml:"expr" json:"expr"`
	For         string            `yaml:"for,omitempty" json:"for,omitempty"`
	Labels      map[string]string `yaml:"labels" json:"labels"`
	Annotations map[string]string `yaml:"annotations" json:"annotations"`
}

// Group is one rule group: one per bundle.
type Group struct {
	Name  string `yaml:"name" json:"name"`
	Rules []Rule `yaml:"rules" json:"rules"`
}

// groupName is the rule group of a bundle.
func groupName(bundle string) string { return "rotate-certs." + bundle }

// Groups returns the rule groups for certs: one group per bundle (sorted by
// name), in each the CAs then the leaves, by NotAfter then fingerprint,
// each certificate once with a warning and a critical rule.
func Groups(certs []Certificate, warnWithin, failWithin time.Duration) []Group {
	type entry struct {
		Certificate
		fp string
	}
	byBundle := map[string]map[string]*entry{}
	for _, c := range certs {
		fp := pki.FingerprintOf(c.Cert).String()
		m := byBundle[c.Bundle]
		if m == nil {
			m = map[string]*entry{}
			byBundle[c.Bundle] = m
		}
		// A certificate has one NotAfter alert, whatever role; a re-issue
		// alert of its own per CA it needs, at the earliest date.
		k := fp
		if c.Role == RoleReissue {
			k += "\x00" + c.IssuerSHA256 + "\x00" + c.Issuer
		}
		if e, ok := m[k]; ok {
			e.Where = append(e.Where, c.Where...)
			if rank(c.Role) < rank(e.Role) {
				e.Role = c.Role
			}
			if c.Role == RoleReissue && c.Due.Before(e.Due) {
				e.Due = c.Due
			}
			continue
		}
		cp := c
		cp.Where = append([]string(nil), c.Where...)
		m[k] = &entry{Certificate: cp, fp: fp}
	}
	groups := make([]Group, 0, len(byBundle))
	for _, b := range slices.Sorted(maps.Keys(byBundle)) {
		entries := slices.SortedFunc(maps.Values(byBundle[b]), func(a, c *entry) int {
			return cmp.Or(
				cmp.Compare(rank(a.Role), rank(c.Role)),
				a.at().Compare(c.at()),
				cmp.Compare(a.fp, c.fp),
				cmp.Compare(a.IssuerSHA256+a.Issuer, c.IssuerSHA256+c.Issuer),
			)
		})
		g := Group{Name: groupName(b), Rules: []Rule{}}
		for _, e := range entries {
			g.Rules = append(g.Rules, rules(e.Certificate, e.fp, warnWithin, failWithin)...)
		}
		groups = append(groups, g)
	}
	return groups
}

// firingTimes returns the unix seconds from which the warning and the
// critical alert of a certificate expiring at at fire.
func firingTimes(at time.Time, warnWithin, failWithin time.Duration) (warning, critical int64) {
	n := at.Unix()
	return n - seconds(warnWithin), n - seconds(failWithin)
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }

func rules(c Certificate, fp string, warnWithin, failWithin time.Duration) []Rule {
	at := c.at()
	n := at.Unix()
	warnAt, critAt := firingTimes(at, warnWithin, failWithin)
	// Prometheus expands Go templates in alert labels and annotations; a
	// subject is data, so any "{{" in it is written as a template literal.
	subject := templateLiteral(pki.Subject(c.Cert))
	where := uniqueSorted(c.Where)
	if len(where) > 3 {
		where = append(where[:3], fmt.Sprintf("and %d more", len(where)-3))
	}
	labels := func(severity string) map[string]string {
		l := map[string]string{
			"severity":    severity,
			"bundle":      c.Bundle,
			"role":        c.Role,
			"subject":     subject,
			"fingerprint": fp,
		}
		if c.Role == RoleReissue {
			l["issuer"] = templateLiteral(c.Issuer)
		}
		return l
	}
	summary, what := texts(c, subject, fp)
	annotations := map[string]string{
		"summary": summary,
		"description": fmt.Sprintf("%s. Warning from %s, critical from %s. Found in %s. %s",
			what, time.Unix(warnAt, 0).UTC().Format(time.RFC3339), time.Unix(critAt, 0).UTC().Format(time.RFC3339), strings.Join(where, ", "), action(c.Role)),
	}
	return []Rule{
		{
			Alert:       AlertName,
			Expr:        fmt.Sprintf("(vector(%d - time()) <= %d) > %d", n, seconds(warnWithin), seconds(failWithin)),
			Labels:      labels("warning"),
			Annotations: annotations,
		},
		{
			Alert:       AlertName,
			Expr:        fmt.Sprintf("vector(%d - time()) <= %d", n, seconds(failWithin)),
			Labels:      labels("critical"),
			Annotations: annotations,
		},
	}
}

// texts returns an alert's summary and the first sentence of its
// description.
func texts(c Certificate, subject, fp string) (summary, what string) {
	notAfter := c.Cert.NotAfter.UTC().Format(time.RFC3339)
	kind := map[string]string{RoleCA: "CA certificate", RoleLeaf: "leaf certificate", RoleIssuer: "issuer certificate", RoleReissue: "certificate"}[c.Role]
	countdown := "{{ if ge $value 0.0 }}expires in {{ $value | humanizeDuration }}{{ else }}has expired{{ end }}"
	if c.Role != RoleReissue {
		return fmt.Sprintf("%s %s of trust bundle %q expires %s", kind, subject, c.Bundle, notAfter),
			fmt.Sprintf("%s %s (sha256 %s) of trust bundle %q %s (NotAfter %s)", kind, subject, fp, c.Bundle, countdown, notAfter)
	}
	due := c.Due.UTC().Format(time.RFC3339)
	issuer := templateLiteral(c.Issuer)
	if c.IssuerSHA256 != "" {
		issuer += " (sha256 " + c.IssuerSHA256 + ")"
	}
	return fmt.Sprintf("certificate %s needs CA %s, which leaves trust bundle %q %s", subject, templateLiteral(c.Issuer), c.Bundle, due),
		fmt.Sprintf("certificate %s (sha256 %s, NotAfter %s) chains only to %s, which {{ if ge $value 0.0 }}leaves trust bundle %q in {{ $value | humanizeDuration }}{{ else }}has left trust bundle %q{{ end }} (%s)",
			subject, fp, notAfter, issuer, c.Bundle, c.Bundle, due)
}

// action says what to do about an alert of role.
func action(role string) string {
	switch role {
	case RoleCA:
		return "Rotate the CA (and re-render the bundle) before then."
	case RoleReissue:
		return "Re-issue it from a current CA of the bundle before then (check lists it with the command that renews it)."
	}
	return "Renew it (from a current CA of the bundle) before then."
}

// uniqueSorted returns the distinct strings of in, sorted (nil for none).
func uniqueSorted(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// templateLiteral returns s as Prometheus alert template text that expands to
// s itself: every "{{" becomes an action printing "{{". A lone "}}" is plain
// text to Go templates and needs nothing.
func templateLiteral(s string) string {
	return strings.ReplaceAll(s, "{{", `{{ "{{" }}`)
}
