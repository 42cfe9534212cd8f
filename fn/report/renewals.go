package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

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
	RenewalDisabled = "disabled"
	RenewalPast     = "past: snapshot and render"
	RenewalDue      = "due soon"
	RenewalLater    = "later"
)

// State says where the renewal stands at now: past (the cluster likely
// holds a new CA), due within warnWithin, later, or disabled.
func (x Renewal) State(now time.Time, warnWithin time.Duration) string {
	switch {
	case x.Disabled:
		return RenewalDisabled
	case !x.RenewsAt.After(now):
		return RenewalPast
	case !now.Before(x.RenewsAt.Add(-warnWithin)):
		return RenewalDue
	}
	return RenewalLater
}

// keyCell says whether the renewal changes the key ("-" when there is no
// renewal).
func (x Renewal) keyCell() string {
	if x.Disabled {
		return "-"
	}
	if x.NewKey {
		return "new"
	}
	return "same"
}

// sortRenewals orders renewals by date (disabled last), then package,
// Certificate and bundle.
func sortRenewals(rs []Renewal) {
	slices.SortStableFunc(rs, func(a, b Renewal) int {
		if a.Disabled != b.Disabled {
			if a.Disabled {
				return 1
			}
			return -1
		}
		return cmp.Or(
			a.RenewsAt.Compare(b.RenewsAt),
			cmp.Compare(a.Package, b.Package),
			cmp.Compare(refKey(a.Certificate), refKey(b.Certificate)),
			cmp.Compare(a.Bundle, b.Bundle),
		)
	})
}

// renewalsTable has a row per CA Certificate and bundle.
func renewalsTable(r Report, pkg bool, opts TableOptions) *table {
	t := newTable(pkg, opts,
		[]string{"CERTIFICATE", "BUNDLE", "RENEWS (UTC)", "STATE", "KEY", "RULE", "CA SHA256", "SOURCE"},
		[]string{"CERTIFICATE", "BUNDLE", "RENEWS", "STATE", "KEY", "SOURCE"})
	layout := opts.layout()
	for _, x := range r.Renewals {
		at := "never"
		if !x.Disabled {
			at = x.RenewsAt.Format(layout)
		}
		if x.Windows {
			at += " (windows)"
		}
		cells := []string{cell(x.Certificate.String()), cell(x.Bundle), at, x.State(r.Now, r.WarnWithin), x.keyCell()}
		if opts.Wide {
			cells = append(cells, cell(x.Rule), x.SHA256)
		}
		t.addRow(pkg, x.Package, append(cells, cell(x.Source)), "")
	}
	return t
}

type jsonRenewal struct {
	Package     string       `json:"package"`
	Certificate jsonResource `json:"certificate"`
	Bundle      string       `json:"bundle"`
	Source      string       `json:"source"`
	SHA256      string       `json:"sha256"`
	NotAfter    string       `json:"notAfter"`
	RenewsAt    string       `json:"renewsAt,omitempty"`
	Rule        string       `json:"rule"`
	Disabled    bool         `json:"disabled"`
	Windows     bool         `json:"windows"`
	NewKey      bool         `json:"newKey"`
	State       string       `json:"state"`
}

// renewalsJSON is nil when there are none: the field is left out, and a
// report without cert-manager Certificates keeps its bytes.
func renewalsJSON(r Report) []jsonRenewal {
	var out []jsonRenewal
	for _, x := range r.Renewals {
		out = append(out, jsonRenewal{Package: x.Package, Certificate: resource(x.Certificate), Bundle: x.Bundle, Source: x.Source,
			SHA256: x.SHA256, NotAfter: stamp(x.NotAfter), RenewsAt: trustStamp(x.RenewsAt), Rule: x.Rule, Disabled: x.Disabled,
			Windows: x.Windows, NewKey: x.NewKey, State: x.State(r.Now, r.WarnWithin)})
	}
	return out
}
