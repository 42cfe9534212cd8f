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
	// Why says which rule set At: "renewBefore 720h", "renewBeforePercentage
	// 25", or cert-manager's default, a third of the lifetime before expiry.
	Why string
	// Disabled is true when spec.renewal.policy is Disabled: cert-manager
	// never renews it, and At is zero.
	Disabled bool
	// Windows is true when spec.renewal.windows may defer the renewal to
	// the next window that opens at or after At (never earlier).
	Windows bool
}

// RenewalOf returns when cert-manager renews the certificate c issued,
// valid from notBefore to notAfter, by cert-manager v1.21's rule
// (pkg/util/pki RenewalTime): the actual lifetime counts, not
// spec.duration; spec.renewBefore when it is positive and shorter than
// that lifetime, else spec.renewBeforePercentage of the lifetime when it
// is in (0,100), else a third of the lifetime; before notAfter, truncated
// to the second.
func (c Certificate) RenewalOf(notBefore, notAfter time.Time) Renewal {
	if c.RenewalPolicy == RenewalDisabled {
		return Renewal{Disabled: true}
	}
	lifetime := notAfter.Sub(notBefore)
	var before time.Duration
	var why string
	switch {
	case c.RenewBefore > 0 && c.RenewBefore < lifetime:
		before, why = c.RenewBefore, "spec.renewBefore "+c.RenewBefore.String()
	case c.RenewBeforePercentage > 0 && c.RenewBeforePercentage < 100:
		// As cert-manager computes it: in floating point, so that a long
		// lifetime times the percentage does not overflow.
		before = time.Duration(float64(lifetime) * float64(c.RenewBeforePercentage) / 100)
		why = fmt.Sprintf("spec.renewBeforePercentage %d", c.RenewBeforePercentage)
	default:
		before, why = lifetime/3, "two thirds into its lifetime, cert-manager's default"
	}
	return Renewal{
		At:      notAfter.Add(-before).Truncate(time.Second),
		Why:     why,
		Windows: c.Windows > 0,
	}
}
