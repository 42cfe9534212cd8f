package certmanager

import (
	"crypto/x509"
	"fmt"
	"time"
)

// Forecast is the next renewal of a CA Certificate whose Secret is a
// trust bundle source, seen from the CA that Secret holds now (the one
// the render saw).
type Forecast struct {
	Certificate Certificate
	// Bundle is the trust bundle, and Source the source the Certificate
	// writes ("Secret cert-manager/root-ca data.ca.crt").
	Bundle, Source string
	// CA is the certificate cert-manager issued (the Secret's tls.crt).
	CA      *x509.Certificate
	Renewal Renewal
}

// ForecastOf computes the renewal of the CA that c issued.
func ForecastOf(c Certificate, bundle, source string, ca *x509.Certificate) Forecast {
	return Forecast{Certificate: c, Bundle: bundle, Source: source, CA: ca, Renewal: c.renewalOf(ca.NotBefore, ca.NotAfter)}
}

// Due reports whether the renewal is within warnWithin of now, or past.
func (f Forecast) Due(now time.Time, warnWithin time.Duration) bool {
	return !f.Renewal.Disabled && !now.Before(f.Renewal.At.Add(-warnWithin))
}

// Message says when cert-manager renews the CA, whether the key changes,
// and what to do about it before or right after.
func (f Forecast) Message(now time.Time) string {
	c := f.Certificate
	head := fmt.Sprintf("bundle %q: CA Certificate %s writes its source %s", f.Bundle, c.Name(), f.Source)
	if f.Renewal.Disabled {
		return fmt.Sprintf("%s and has spec.renewal.policy Disabled: cert-manager never renews it, so no renewal is due; its CA expires %s, which the expiry report covers",
			head, f.CA.NotAfter.UTC().Format(time.RFC3339))
	}
	at := f.Renewal.At.UTC().Format(time.RFC3339)
	when := fmt.Sprintf("cert-manager renews it at %s, %s (%s)", at, inDays(f.Renewal.At, now), f.Renewal.Why)
	if !f.Renewal.At.After(now) {
		when = fmt.Sprintf("cert-manager was due to renew it at %s, %s (%s): the cluster likely holds a new CA already", at, inDays(f.Renewal.At, now), f.Renewal.Why)
	}
	if f.Renewal.Windows {
		when += "; spec.renewal.windows may defer it to the next window, never earlier"
	}
	return head + "; " + when + "; " + f.keyChange()
}

// keyChange says whether the renewal makes a new key, what that does to
// the leaves of the current CA, and what to do.
func (f Forecast) keyChange() string {
	if !f.Certificate.KeyChanges() {
		return "with the same key (spec.privateKey.rotationPolicy Never): leaves of the current CA keep verifying against the renewed one - snapshot the Secret and render after the renewal so that git holds the new CA"
	}
	policy := "Always"
	if f.Certificate.rotationPolicy == "" {
		policy = "unset: Always, cert-manager's default since v1.18"
	}
	return "with a new key (spec.privateKey.rotationPolicy " + policy + "): leaves of the current CA stop verifying against a bundle of the new CA alone - " +
		"snapshot the Secret and render right after the renewal (the bundle then carries the old CA beside the new one), or pre-distribute the next CA as an optional source, " +
		"or set spec.privateKey.rotationPolicy: Never on the Certificate to renew with the same key"
}

// inDays says how far t is from now in whole days: "in 3 day(s)", "today",
// "5 day(s) ago".
func inDays(t, now time.Time) string {
	d := t.Sub(now)
	days := int(d.Round(time.Hour).Hours() / 24)
	switch {
	case days > 0:
		return fmt.Sprintf("in %d day(s)", days)
	case days < 0:
		return fmt.Sprintf("%d day(s) ago", -days)
	case d >= 0:
		return "within a day"
	}
	return "less than a day ago"
}
