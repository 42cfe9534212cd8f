// Package alerts builds the PrometheusRule of spec.alerts: one alert per
// certificate a policy trusts or watches, firing at fixed unix times
// derived from the certificate's NotAfter. The expressions read no metric
// at all - only time() - so the rule fires on any Prometheus that loads
// it, whether or not CI ever renders again, and needs no exporter.
//
// The alert model, for a certificate with NotAfter N (unix seconds) and
// thresholds W = warnWithin, F = failWithin (seconds):
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
	"crypto/x509"
	"fmt"
	"slices"
	"sort"
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
	// RoleLeaf is a leaf of the input that a CA of the bundle signed.
	RoleLeaf = "leaf"
)

// Certificate is one certificate to alert on, in one bundle.
type Certificate struct {
	Cert   *x509.Certificate
	Bundle string
	Role   string
	// Where lists the places it was found ("Secret ns/name data.ca.crt").
	Where []string
}

// Rule is one alerting rule, as Prometheus reads it.
type Rule struct {
	Alert       string            `yaml:"alert" json:"alert"`
	Expr        string            `yaml:"expr" json:"expr"`
	Labels      map[string]string `yaml:"labels" json:"labels"`
	Annotations map[string]string `yaml:"annotations" json:"annotations"`
}

// Group is one rule group: one per bundle.
type Group struct {
	Name  string `yaml:"name" json:"name"`
	Rules []Rule `yaml:"rules" json:"rules"`
}

// GroupName is the rule group of a bundle.
func GroupName(bundle string) string { return "rotate-certs." + bundle }

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
		if e, ok := m[fp]; ok {
			e.Where = append(e.Where, c.Where...)
			if c.Role == RoleCA {
				e.Role = RoleCA
			}
			continue
		}
		m[fp] = &entry{Certificate: Certificate{Cert: c.Cert, Bundle: c.Bundle, Role: c.Role, Where: append([]string(nil), c.Where...)}, fp: fp}
	}
	bundles := make([]string, 0, len(byBundle))
	for b := range byBundle {
		bundles = append(bundles, b)
	}
	sort.Strings(bundles)
	groups := make([]Group, 0, len(bundles))
	for _, b := range bundles {
		entries := make([]*entry, 0, len(byBundle[b]))
		for _, e := range byBundle[b] {
			entries = append(entries, e)
		}
		sort.Slice(entries, func(i, j int) bool {
			a, c := entries[i], entries[j]
			if a.Role != c.Role {
				return a.Role == RoleCA
			}
			if !a.Cert.NotAfter.Equal(c.Cert.NotAfter) {
				return a.Cert.NotAfter.Before(c.Cert.NotAfter)
			}
			return a.fp < c.fp
		})
		g := Group{Name: GroupName(b), Rules: []Rule{}}
		for _, e := range entries {
			g.Rules = append(g.Rules, rules(e.Certificate, e.fp, warnWithin, failWithin)...)
		}
		groups = append(groups, g)
	}
	return groups
}

// FiringTimes returns the unix seconds from which the warning and the
// critical alert of cert fire.
func FiringTimes(cert *x509.Certificate, warnWithin, failWithin time.Duration) (warning, critical int64) {
	n := cert.NotAfter.Unix()
	return n - seconds(warnWithin), n - seconds(failWithin)
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }

func rules(c Certificate, fp string, warnWithin, failWithin time.Duration) []Rule {
	n := c.Cert.NotAfter.Unix()
	warnAt, critAt := FiringTimes(c.Cert, warnWithin, failWithin)
	// Prometheus expands Go templates in alert labels and annotations; a
	// subject is data, so any "{{" in it is written as a template literal.
	subject := templateLiteral(pki.Subject(c.Cert))
	what, action := "leaf certificate", "Renew it (from a current CA of the bundle) before then."
	if c.Role == RoleCA {
		what, action = "CA certificate", "Rotate the CA (and re-render the bundle) before then."
	}
	where := uniqueSorted(c.Where)
	if len(where) > 3 {
		where = append(where[:3], fmt.Sprintf("and %d more", len(where)-3))
	}
	notAfter := c.Cert.NotAfter.UTC().Format(time.RFC3339)
	labels := func(severity string) map[string]string {
		return map[string]string{
			"severity":    severity,
			"bundle":      c.Bundle,
			"role":        c.Role,
			"subject":     subject,
			"fingerprint": fp,
		}
	}
	annotations := map[string]string{
		"summary": fmt.Sprintf("%s %s of trust bundle %q expires %s", what, subject, c.Bundle, notAfter),
		"description": fmt.Sprintf(
			"%s %s (sha256 %s) of trust bundle %q {{ if ge $value 0.0 }}expires in {{ $value | humanizeDuration }}{{ else }}has expired{{ end }} (NotAfter %s). "+
				"Warning from %s, critical from %s. Found in %s. %s",
			what, subject, fp, c.Bundle, notAfter,
			time.Unix(warnAt, 0).UTC().Format(time.RFC3339), time.Unix(critAt, 0).UTC().Format(time.RFC3339), strings.Join(where, ", "), action),
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
