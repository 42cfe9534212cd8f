package certmanager

import (
	"fmt"
	"time"
)

// Renewal is when cert-manager renews the certificate a Certificate
// issued.
type Renewal struct {
	// At is the renewal time: cert-manager issues anew from then on.
	At time.Time
	// Field is the Certificate field whose rule set At: spec.renewBefore,
	// spec.renewBeforePercentage, or spec.duration for cert-manager's
	// default (a third of the lifetime before expiry); spec.renewal.policy
	// when Disabled.
	Field string
	// Why says which rule set At: "spec.renewBefore 720h0m0s",
	// "spec.renewBeforePercentage 25", or cert-manager's default.
	Why string
	// Disabled is true when spec.renewal.policy is Disabled: cert-manager
	// never renews it, and At is zero.
	Disabled bool
	// Windows is true when spec.renewal.windows may defer the renewal to
	// the next window that opens at or after At (never earlier).
	Windows bool
}

// renewalOf returns when cert-manager renews the certificate c issued,
// valid from notBefore to notAfter, by cert-manager v1.21's rule
// (pkg/util/pki RenewalTime): the actual lifetime counts, not
// spec.duration; spec.renewBefore when it is positive and shorter than
// that lifetime (a longer one is ignored, not clamped), else
// spec.renewBeforePercentage of the lifetime when it is in (0,100), else
// a third of the lifetime; before notAfter, truncated to the second.
func (c Certificate) renewalOf(notBefore, notAfter time.Time) Renewal {
	if c.renewalPolicy == renewalDisabled {
		return Renewal{Disabled: true, Field: "spec.renewal.policy", Why: "spec.renewal.policy Disabled"}
	}
	lifetime := notAfter.Sub(notBefore)
	var before time.Duration
	var why, field string
	switch {
	case c.renewBefore > 0 && c.renewBefore < lifetime:
		before, field = c.renewBefore, "spec.renewBefore"
		why = field + " " + c.renewBefore.String()
	case c.renewBeforePercentage > 0 && c.renewBeforePercentage < 100:
		// As cert-manager computes it: in floating point, so that a long
		// lifetime times the percentage does not overflow.
		before, field = time.Duration(float64(lifetime)*float64(c.renewBeforePercentage)/100), "spec.renewBeforePercentage"
		why = fmt.Sprintf("%s %d", field, c.renewBeforePercentage)
	default:
		before, field = lifetime/3, "spec.duration"
		why = "two thirds into its lifetime, cert-manager's default"
	}
	return Renewal{
		At:      notAfter.Add(-before).Truncate(time.Second),
		Field:   field,
		Why:     why,
		Windows: c.windows > 0,
	}
}
