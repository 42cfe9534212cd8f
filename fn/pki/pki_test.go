package pki

import (
	"bytes"
	"fmt"
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
		{"garbage in a certificate block", []byte("-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n"), nil, nil, "the 1st PEM block (line 1): x509:"},
		{"truncated second block", join(ca.PEM(), []byte("-----BEGIN CERTIFICATE-----\nMIIB")), nil, nil, "the 2nd PEM block (line 11) is malformed: its END line is missing or misspelt"},
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
		{"truncated block after a good one", join(ca.PEM(), []byte("-----BEGIN CERTIFICATE-----\nMIIB")), []string{"ca"}, []string{"the 2nd PEM block (line 11) is malformed"}},
		{"bad block between good ones", join(ca.PEM(), garbage, other.PEM()), []string{"ca", "other"}, []string{"the 2nd PEM block (line 11): x509:"}},
		{"two problems", join(garbage, ca.PEM(), []byte("-----BEGIN CERTIFICATE-----\nMIIB")), []string{"ca"}, []string{"the 1st PEM block (line 1): x509:", "the 3rd PEM block (line 14) is malformed"}},
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
			for _, c := range []*Cache{NewCache(), nil} { // a nil cache parses anew
				cached, cerrs := c.ScanPEM(tc.in)
				require.Len(t, cached.Certificates, len(tc.certs))
				require.Len(t, cerrs, len(tc.errs))
			}
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

// encoding/pem skips a block it cannot read and resumes at the next BEGIN
// line: a certificate with one damaged body line or a misspelt END line,
// in the middle of a bundle, vanished without a word (exit 0, the bundle
// without that CA). Every broken block, and every line outside the blocks
// that looks like part of one, is a problem naming the block's ordinal and
// the line; DecodePEM fails on it. Text that is not PEM-like (comments,
// headings, openssl's subject= lines) stays allowed.
func TestBrokenBlocksAreNeverSkipped(t *testing.T) {
	a := testpki.NewCA("a", testpki.Date(2026, 1, 1), testpki.Days(365)).PEM()
	b := testpki.NewCA("b", testpki.Date(2026, 1, 1), testpki.Days(365)).PEM()
	c := testpki.NewCA("c", testpki.Date(2026, 1, 1), testpki.Days(365)).PEM()
	lines := func(p []byte) []string { return strings.SplitAfter(string(p), "\n") }
	edit := func(p []byte, i int, f func(string) string) []byte {
		l := lines(p)
		l[i] = f(l[i])
		return []byte(strings.Join(l, ""))
	}
	last := len(lines(b)) - 2 // the END line (the last element is "")
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	bLines := len(lines(a)) - 1 // b starts on the line after a's last
	tests := []struct {
		name string
		in   []byte
		want string // "" means it decodes, as three certificates
	}{
		{"damaged body line", join(a, edit(b, 2, func(s string) string { return s[:10] + "!!" + s[12:] }), c),
			fmt.Sprintf("the 2nd PEM block (line %d) is malformed: its body is not valid base64", bLines+1)},
		{"body line cut short", join(a, edit(b, 2, func(s string) string { return s[:30] + "\n" }), c),
			"the 2nd PEM block"},
		{"END line with four dashes", join(a, edit(b, last, func(string) string { return "-----END CERTIFICATE----\n" }), c),
			"the 2nd PEM block (line 11) is malformed: its END line is missing or misspelt"},
		{"END line misspelt", join(a, edit(b, last, func(string) string { return "-----END CERTIFICAT-----\n" }), c),
			"its END line is missing or misspelt"},
		{"END line missing", join(a, edit(b, last, func(string) string { return "" }), c),
			"the 2nd PEM block (line 11) is malformed"},
		{"BEGIN line with four dashes", join(a, edit(b, 0, func(string) string { return "----BEGIN CERTIFICATE-----\n" }), c),
			"line 11, after the 1st PEM block, looks like part of a PEM block (a BEGIN line that is indented or misspelt)"},
		{"BEGIN line indented", join(a, edit(b, 0, func(string) string { return "  -----BEGIN CERTIFICATE-----\n" }), c),
			"line 11, after the 1st PEM block, looks like part of a PEM block (a BEGIN line that is indented or misspelt)"},
		{"BEGIN line without its space", join(a, edit(b, 0, func(string) string { return "-----BEGINCERTIFICATE-----\n" }), c),
			"line 11, after the 1st PEM block, looks like part of a PEM block"},
		{"BEGIN line lost", join(a, edit(b, 0, func(string) string { return "" }), c),
			"line 11, after the 1st PEM block, looks like part of a PEM block (a line of base64 outside any block"},
		{"orphan END line first", join([]byte("-----END CERTIFICATE-----\n"), a, b, c),
			"line 1, before the 1st PEM block, looks like part of a PEM block (an END line that closes no block)"},
		{"damaged last block", join(a, b, edit(c, 2, func(s string) string { return "#" + s[1:] })),
			"the 3rd PEM block"},
		{"base64 after the last block", join(a, b, c, []byte(lines(c)[1])),
			"after the 3rd PEM block"},
		{"a BEGIN mid-line", join(a, []byte("see: -----BEGIN CERTIFICATE-----\n"), b, c),
			"a BEGIN or END line in the middle of a line"},
		{"comments and headings between blocks", join([]byte("# roots\n"), a, []byte("\nGlobalSign Root CA\n==================\n"), b,
			[]byte("subject=CN = b\nissuer=CN = b\n-----\n"), c, []byte("\n\n")), ""},
		{"CRLF line ends", []byte(strings.ReplaceAll(string(join(a, b, c)), "\n", "\r\n")), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DecodePEM(tt.in)
			scanned, errs := ScanPEM(tt.in)
			if tt.want == "" {
				require.NoError(t, err)
				require.Len(t, d.Certificates, 3)
				require.Empty(t, errs)
				return
			}
			require.ErrorContains(t, err, tt.want)
			require.Empty(t, d.Certificates, "a failed decode returns nothing")
			require.NotEmpty(t, errs)
			require.GreaterOrEqual(t, len(scanned.Certificates), 1, "the lenient scan keeps the blocks that read")
			require.True(t, HoldsCertificateData(tt.in), "the report sees the value as certificate data")
		})
	}
}

// A damaged block that declares a type other than a certificate (a key)
// is skipped like a sound one: no certificate is lost, and it is never
// read.
func TestBrokenKeyBlockIsSkipped(t *testing.T) {
	ca := testpki.NewCA("a", testpki.Date(2026, 1, 1), testpki.Days(365))
	key := strings.Replace(string(ca.KeyPEM()), "-----END PRIVATE KEY-----", "-----END PRIVATE KEY----", 1)
	d, err := DecodePEM(append([]byte(key), ca.PEM()...))
	require.NoError(t, err)
	require.Len(t, d.Certificates, 1)
	require.Equal(t, []string{"PRIVATE KEY"}, d.SkippedTypes)
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th"} {
		require.Equal(t, want, ordinal(n))
	}
}

// A value of many broken blocks (10 MB of BEGIN lines is 374,000) is
// described by its first maxProblems problems and a count of the rest,
// not by a message of tens of megabytes.
func TestScanPEMCountsProblemsBeyondTheFirst(t *testing.T) {
	in := bytes.Repeat([]byte("-----BEGIN CERTIFICATE-----\n"), 1000)
	_, errs := ScanPEM(in)
	require.Len(t, errs, maxProblems+1)
	require.EqualError(t, errs[maxProblems], fmt.Sprintf("and %d more problem(s)", 1000-maxProblems))
	_, err := DecodePEM(in)
	require.EqualError(t, err, errs[0].Error())
}
