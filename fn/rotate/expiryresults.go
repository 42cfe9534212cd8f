package rotate

import (
	"fmt"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// ExpiryResults is function mode's expiry report of inv: one info result
// per certificate and reported expiry, a warning for each one expiring
// within warnWithin or already expired, and a warning per problem. Time
// passing alone never produces an error.
func ExpiryResults(inv *inventory.Inventory, now time.Time, warnWithin time.Duration) framework.Results {
	var out framework.Results
	for _, f := range inv.Certificates {
		c := f.Cert
		days := pki.DaysLeft(c, now)
		msg := fmt.Sprintf("certificate %q sha256:%s expires %s (%d days left)",
			pki.Subject(c), pki.FingerprintOf(c), c.NotAfter.UTC().Format(time.RFC3339), days)
		field := f.Key()
		out = append(out, f.Ref.Result(framework.Info, field, msg))
		switch {
		case pki.Expired(c, now):
			out = append(out, f.Ref.Result(framework.Warning, field,
				fmt.Sprintf("certificate %q sha256:%s expired %s", pki.Subject(c), pki.FingerprintOf(c).Short(), c.NotAfter.UTC().Format(time.RFC3339))))
		case c.NotAfter.Sub(now) <= warnWithin:
			out = append(out, f.Ref.Result(framework.Warning, field,
				fmt.Sprintf("certificate %q sha256:%s expires in %d days (%s), inside expiry.warnWithin %s",
					pki.Subject(c), pki.FingerprintOf(c).Short(), days, c.NotAfter.UTC().Format(time.RFC3339), warnWithin)))
		}
	}
	for _, e := range inv.Expiries {
		at := e.At(now)
		days := pki.DaysUntil(at, now)
		when := at.UTC().Format(time.RFC3339)
		if e.Approximate() {
			when = "as reported in days, not as a date"
		}
		out = append(out, e.Ref.Result(framework.Info, e.Field, fmt.Sprintf("%s expire in %d days (%s)", e.Subject, days, when)))
		switch {
		case now.After(at):
			out = append(out, e.Ref.Result(framework.Warning, e.Field, fmt.Sprintf("%s have expired (%s)", e.Subject, when)))
		case at.Sub(now) <= warnWithin:
			out = append(out, e.Ref.Result(framework.Warning, e.Field,
				fmt.Sprintf("%s expire in %d days (%s), inside expiry.warnWithin %s", e.Subject, days, when, warnWithin)))
		}
	}
	for _, p := range inv.Problems {
		what := "unreadable certificate data: "
		if p.Expiry {
			what = "unreadable certificate expiry: "
		}
		out = append(out, p.Ref.Result(framework.Warning, p.Field, what+p.Message))
	}
	return out
}
