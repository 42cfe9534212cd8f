package pki

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

func TestDecodePEM(t *testing.T) {
	ca := testpki.NewCA("ca", testpki.Date(2026, 1, 1), testpki.Days(365))
	other := testpki.NewCA("other", testpki.Date(2026, 1, 1), testpki.Days(365))
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name    string
		in      []byte
		certs   []string
		skipped []string
		wantErr string
	}{
		{"one certificate", ca.PEM(), []string{"ca"}, nil, ""},
		{"two in order with duplicates kept", join(other.PEM(), ca.PEM(), other.PEM()), []string{"other", "ca", "other"}, nil, ""},
		{"key block skipped", join(ca.PEM(), ca.KeyPEM()), []string{"ca"}, []string{"PRIVATE KEY"}, ""},
		{"text around blocks ignored", join([]byte("# comment\n"), ca.PEM(), []byte("\n\n")), []string{"ca"}, nil, ""},
		{"no PEM", []byte("hello"), nil, nil, "no PEM data"},
		{"empty", nil, nil, nil, "no PEM data"},
		{"garbage in a certificate block", []byte("-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n"), nil, nil, "PEM block 1"},
		{"truncated second block", join(ca.PEM(), []byte("-----BEGIN CERTIFICATE-----\nMIIB")), nil, nil, "PEM block 2 is malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DecodePEM(tt.in)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, c := range d.Certificates {
				names = append(names, c.Subject.CommonName)
			}
			require.Equal(t, tt.certs, names)
			require.Equal(t, tt.skipped, d.SkippedTypes)
			require.Equal(t, len(tt.skipped) > 0, d.HasPrivateKey())
		})
	}
}

func TestEncodePEMRoundTripAndNoKeys(t *testing.T) {
	ca := testpki.NewCA("ca", testpki.Date(2026, 1, 1), testpki.Days(365))
	d, err := DecodePEM(append(ca.PEM(), ca.KeyPEM()...))
	require.NoError(t, err)
	out := EncodePEM(d.Certificates)
	require.Equal(t, string(ca.PEM()), string(out))
	require.NotContains(t, string(out), "PRIVATE KEY")
	require.True(t, strings.HasSuffix(string(out), "\n"))
}

func TestDaysLeft(t *testing.T) {
	ca := testpki.NewCA("ca", testpki.Date(2026, 1, 1), testpki.Days(10))
	tests := []struct {
		now  time.Time
		want int
	}{
		{testpki.Date(2026, 1, 1), 10},
		{testpki.Date(2026, 1, 1).Add(time.Hour), 9},
		{testpki.Date(2026, 1, 11), 0},
		{testpki.Date(2026, 1, 11).Add(time.Hour), -1},
		{testpki.Date(2026, 1, 13), -2},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, DaysLeft(ca.Cert, tt.now), "now %s", tt.now)
	}
	require.False(t, Expired(ca.Cert, testpki.Date(2026, 1, 11)))
	require.True(t, Expired(ca.Cert, testpki.Date(2026, 1, 11).Add(time.Second)))
}

func TestIsCAAndSet(t *testing.T) {
	ca := testpki.NewCA("ca", testpki.Date(2026, 1, 1), testpki.Days(10))
	leaf := testpki.NewLeaf("leaf", ca, testpki.Date(2026, 1, 1), testpki.Days(5))
	require.True(t, IsCA(ca.Cert))
	require.False(t, IsCA(leaf.Cert))

	s := NewSet(ca.Cert, leaf.Cert, ca.Cert)
	require.Equal(t, 2, s.Len())
	require.True(t, s.Has(leaf.Cert))
	require.False(t, s.Add(ca.Cert))
	require.Equal(t, "ca", s.List()[0].Subject.CommonName)
	require.Len(t, FingerprintOf(ca.Cert).String(), 64)
	require.Len(t, FingerprintOf(ca.Cert).Short(), 12)
}
