package report

import (
	"cmp"
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/why"
)

// keyCell says whether the renewal changes the key ("-" when there is no
// renewal).
func keyCell(x why.Renewal) string {
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
func sortRenewals(rs []why.Renewal) {
	slices.SortStableFunc(rs, func(a, b why.Renewal) int {
		if a.Disabled != b.Disabled {
			if a.Disabled {
				return 1
			}
			return -1
		}
		return cmp.Or(
			a.RenewsAt.Compare(b.RenewsAt),
			cmp.Compare(a.Package, b.Package),
			compareRefs(a.Certificate, b.Certificate),
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
		cells := []string{cell(x.Certificate.String()), cell(x.Bundle), at, x.State(r.now, r.warnWithin), keyCell(x)}
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
			Windows: x.Windows, NewKey: x.NewKey, State: x.State(r.now, r.warnWithin)})
	}
	return out
}
