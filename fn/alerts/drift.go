package alerts

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// DriftAlertName is the alert that fires when cert-manager has renewed, in
// the cluster, a CA that a bundle reads and git still holds the old one.
const DriftAlertName = "RotateCertsCARenewedInCluster"

// driftFor is how long the live CA must differ from the rendered one
// before the drift alert fires: time for a pipeline that snapshots and
// renders on a renewal to catch up on its own.
const driftFor = "15m"

// CertManagerExpiryMetric is the metric cert-manager's controller exports
// for every Certificate (labels name, namespace, issuer_name, issuer_kind,
// issuer_group): the NotAfter of the certificate in its Secret, in Unix
// seconds, 0 until it is issued.
const CertManagerExpiryMetric = "certmanager_certificate_expiration_timestamp_seconds"

// Drift is a bundle source that a cert-manager Certificate writes, and the
// CA the render saw in it.
type Drift struct {
	Bundle string
	// Namespace and Name are the Certificate's.
	Namespace, Name string
	// Source is the bundle source ("Secret cert-manager/root-ca").
	Source string
	// NotAfter and SHA256 are the rendered CA's.
	NotAfter time.Time
	SHA256   string
}

// driftExpr is the expression of d's alert: the Certificate's live
// NotAfter, once issued (above 0), is not the one the render saw.
func driftExpr(d Drift) string {
	return fmt.Sprintf(`(%s{name=%q,namespace=%q} > 0) != %d`, CertManagerExpiryMetric, d.Name, d.Namespace, d.NotAfter.Unix())
}

func driftRule(d Drift) Rule {
	cert := d.Namespace + "/" + d.Name
	notAfter := d.NotAfter.UTC().Format(time.RFC3339)
	return Rule{
		Alert: DriftAlertName,
		Expr:  driftExpr(d),
		For:   driftFor,
		Labels: map[string]string{
			"severity":    "warning",
			"bundle":      d.Bundle,
			"role":        "drift",
			"certificate": cert,
			"fingerprint": d.SHA256,
		},
		Annotations: map[string]string{
			"summary": fmt.Sprintf("CA renewed in the cluster; git has not caught up - snapshot and render (Certificate %s, trust bundle %q)", cert, d.Bundle),
			"description": fmt.Sprintf("CA renewed in the cluster; git has not caught up - snapshot and render. cert-manager Certificate %s writes %s, a source of trust bundle %q; "+
				"the last render saw its CA (sha256 %s) with NotAfter %s, and the cluster now reports {{ $value | humanizeTimestamp }}. "+
				"Snapshot the Secret (rotate-certs snapshot) and render, so that the bundle carries the new CA beside the old one.",
				cert, d.Source, d.Bundle, d.SHA256, notAfter),
		},
	}
}

// WithDrift adds a drift alert per Certificate and bundle to groups: in
// the bundle's group after its expiry rules (a group of its own when the
// bundle has none), sorted by Certificate; repeats are dropped. Groups
// stay sorted by name.
func WithDrift(groups []Group, drifts []Drift) []Group {
	byBundle := map[string][]Drift{}
	seen := map[string]bool{}
	for _, d := range drifts {
		k := strings.Join([]string{d.Bundle, d.Namespace, d.Name, d.SHA256}, "\x00")
		if !seen[k] {
			seen[k] = true
			byBundle[d.Bundle] = append(byBundle[d.Bundle], d)
		}
	}
	at := map[string]int{}
	for i, g := range groups {
		at[g.Name] = i
	}
	for b, ds := range byBundle {
		slices.SortFunc(ds, func(a, b Drift) int {
			return cmp.Or(cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name), cmp.Compare(a.SHA256, b.SHA256))
		})
		i, ok := at[groupName(b)]
		if !ok {
			groups = append(groups, Group{Name: groupName(b), Rules: []Rule{}})
			i = len(groups) - 1
			at[groupName(b)] = i
		}
		for _, d := range ds {
			groups[i].Rules = append(groups[i].Rules, driftRule(d))
		}
	}
	slices.SortStableFunc(groups, func(a, b Group) int { return cmp.Compare(a.Name, b.Name) })
	return groups
}
