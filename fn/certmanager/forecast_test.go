package certmanager

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/stretchr/testify/require"
)

// TestForecastDue: a renewal is due from warnWithin before it on, and stays
// due once past; a disabled one never is. Messages say when, whether the
// key changes, and what to do.
func TestForecastDue(t *testing.T) {
	nb := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ca := &x509.Certificate{NotBefore: nb, NotAfter: nb.Add(90 * 24 * time.Hour)}
	c := Certificate{Ref: kube.Ref{Kind: kindCertificate, Namespace: "cert-manager", Name: "root"}, secretName: "root", IsCA: true}
	f := ForecastOf(c, "platform", "Secret cert-manager/root", ca)
	at := nb.Add(60 * 24 * time.Hour) // two thirds of 90 days
	require.Equal(t, at, f.Renewal.At)
	warn := 30 * 24 * time.Hour
	require.False(t, f.Due(at.Add(-warn-time.Second), warn))
	require.True(t, f.Due(at.Add(-warn), warn))
	require.True(t, f.Due(at.Add(time.Hour), warn))

	soon := f.Message(at.Add(-3 * 24 * time.Hour))
	require.Contains(t, soon, "cert-manager renews it at 2026-03-02T00:00:00Z, in 3 day(s)")
	require.Contains(t, soon, "with a new key (spec.privateKey.rotationPolicy unset: Always")
	require.Contains(t, soon, "snapshot the Secret and render right after the renewal")
	require.Contains(t, soon, "pre-distribute the next CA")
	require.Contains(t, soon, "spec.privateKey.rotationPolicy: Never")

	past := f.Message(at.Add(48 * time.Hour))
	require.Contains(t, past, "was due to renew it at 2026-03-02T00:00:00Z, 2 day(s) ago")
	require.Contains(t, past, "the cluster likely holds a new CA already")

	c.rotationPolicy = rotationNever
	c.windows = 1
	same := ForecastOf(c, "platform", "Secret cert-manager/root", ca).Message(at)
	require.Contains(t, same, "with the same key (spec.privateKey.rotationPolicy Never): leaves of the current CA keep verifying")
	require.Contains(t, same, "spec.renewal.windows may defer it")

	c.renewalPolicy = renewalDisabled
	off := ForecastOf(c, "platform", "Secret cert-manager/root", ca)
	require.False(t, off.Due(at.Add(365*24*time.Hour), warn))
	require.Contains(t, off.Message(at), "cert-manager never renews it, so no renewal is due")
}
