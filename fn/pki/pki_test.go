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

// TestScanPEM: the lenient decoder keeps every certificate that parses and
// reports each problem; DecodePEM fails with the first of them.
func TestScanPEM(t *testing.T) {
	ca := testpki.NewCA("ca", testpki.Date(2026, 1, 1), testpki.Days(365))
	other := testpki.NewCA("other", testpki.Date(2026, 1, 1), testpki.Days(365))
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	garbage := []byte("-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n")
	for _, tc := range []struct {
		name  string
		in    []byte
		certs []string
		errs  []string
	}{
		{"all good", join(ca.PEM(), other.PEM()), []string{"ca", "other"}, nil},
		{"truncated block after a good one", join(ca.PEM(), []byte("-----BEGIN CERTIFICATE-----\nMIIB")), []string{"ca"}, []string{"PEM block 2 is malformed"}},
		{"bad block between good ones", join(ca.PEM(), garbage, other.PEM()), []string{"ca", "other"}, []string{"PEM block 2: x509:"}},
		{"two problems", join(garbage, ca.PEM(), []byte("-----BEGIN CERTIFICATE-----\nMIIB")), []string{"ca"}, []string{"PEM block 1: x509:", "PEM block 3 is malformed"}},
		{"no PEM", []byte("hello"), nil, []string{"no PEM data found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, errs := ScanPEM(tc.in)
			var names []string
			for _, c := range d.Certificates {
				names = append(names, c.Subject.CommonName)
			}
			require.Equal(t, tc.certs, names)
			require.Len(t, errs, len(tc.errs))
			for i, want := range tc.errs {
				require.ErrorContains(t, errs[i], want)
			}
			strict, err := DecodePEM(tc.in)
			if len(tc.errs) == 0 {
				require.NoError(t, err)
				require.Len(t, strict.Certificates, len(tc.certs))
				return
			}
			require.EqualError(t, err, errs[0].Error(), "DecodePEM fails with the first problem")
			require.Empty(t, strict.Certificates, "DecodePEM keeps nothing of a bad value")
			cached, cerrs := NewCache().ScanPEM(tc.in)
			require.Len(t, cached.Certificates, len(tc.certs))
			require.Len(t, cerrs, len(tc.errs))
		})
	}
}

func TestHoldsCertificateData(t *testing.T) {
	ca := testpki.NewCA("ca", testpki.Date(2026, 1, 1), testpki.Days(365))
	pemText := string(ca.PEM())
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"a certificate", pemText, true},
		{"CRLF line ends", strings.ReplaceAll(pemText, "\n", "\r\n"), true},
		{"after other text", "# the CA\n" + pemText, true},
		{"a block with garbage inside", "-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n", true},
		{"a block cut short", "-----BEGIN CERTIFICATE-----\nMIIBmDCCAT6gAwIBAgII\n", true},
		{"an empty block", "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", true},
		{"headers without blocks", strings.Repeat("-----BEGIN CERTIFICATE-----\n", 3), true},
		{"prose that mentions the markers", "Put your CA between -----BEGIN CERTIFICATE----- and -----END CERTIFICATE----- lines.\n", false},
		{"a marker line followed by prose", "-----BEGIN CERTIFICATE-----\n(paste the certificate here)\n", false},
		{"a marker line alone", "-----BEGIN CERTIFICATE-----", false},
		{"an indented block", "  -----BEGIN CERTIFICATE-----\n  MIIB\n  -----END CERTIFICATE-----\n", false},
		{"a private key", string(ca.KeyPEM()), false},
		{"nothing", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, HoldsCertificateData([]byte(tc.in)))
		})
	}
}
