package pki

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// FuzzDecodePEM feeds arbitrary bytes to the PEM/bundle parser. Whatever
// the input, decoding must not panic, must never let a non-certificate
// block through, and what it accepts must survive the canonical encoding
// unchanged. Seeds: the calls below and testdata/fuzz/FuzzDecodePEM.
func FuzzDecodePEM(f *testing.F) {
	ca := testpki.NewCA("fuzz-ca", testpki.Date(2026, 1, 1), testpki.Days(365))
	leaf := testpki.NewLeaf("fuzz-leaf", ca, testpki.Date(2026, 1, 1), testpki.Days(90))
	f.Add(ca.PEM())
	f.Add(append(ca.PEM(), leaf.PEM()...))
	f.Add(append(leaf.KeyPEM(), ca.PEM()...))
	f.Add(append(ca.PEM(), ca.PEM()...))
	f.Add([]byte("# comment\n" + string(ca.PEM()) + "\ntrailing text\n"))
	f.Add(ca.PEM()[:len(ca.PEM())/2])
	f.Add([]byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("-----BEGIN \x00\xff-----\n\x01\x02\n-----END \x00\xff-----\n"))
	f.Add([]byte{})
	// Broken blocks between sound ones, which encoding/pem skips: a
	// damaged body line, a misspelt END line, a misspelt BEGIN line, a
	// body with no BEGIN line, an indented BEGIN line.
	other := testpki.NewCA("fuzz-other", testpki.Date(2026, 1, 1), testpki.Days(365))
	lines := strings.SplitAfter(string(leaf.PEM()), "\n")
	broken := func(i int, with string) []byte {
		l := append([]string(nil), lines...)
		l[i] = with
		return append(append(ca.PEM(), strings.Join(l, "")...), other.PEM()...)
	}
	f.Add(broken(2, "!!"+lines[2][2:]))
	f.Add(broken(len(lines)-2, "-----END CERTIFICATE----\n"))
	f.Add(broken(0, "----BEGIN CERTIFICATE-----\n"))
	f.Add(broken(0, ""))
	f.Add(broken(0, "  -----BEGIN CERTIFICATE-----\n"))
	f.Add(append(append(ca.PEM(), "-----END CERTIFICATE-----\n"...), other.PEM()...))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodePEM(data)
		_ = HoldsCertificateData(data)
		// ScanPEM and DecodePEM agree: the strict form fails with the
		// first problem the lenient form reports, and succeeds with the
		// same certificates when there is none.
		scanned, errs := ScanPEM(data)
		if err != nil {
			require.Empty(t, d.Certificates, "a failed decode returns nothing")
			require.NotEmpty(t, err.Error())
			require.NotEmpty(t, errs)
			require.Equal(t, err.Error(), errs[0].Error())
			return
		}
		require.Empty(t, errs)
		require.Equal(t, len(d.Certificates), len(scanned.Certificates))
		// Nothing was skipped: every line-start BEGIN line opened a block
		// that was read (a certificate or a skipped type).
		begins := bytes.Count(data, []byte("\n-----BEGIN "))
		if bytes.HasPrefix(data, []byte("-----BEGIN ")) {
			begins++
		}
		require.Equal(t, begins, len(d.Certificates)+len(d.SkippedTypes), "no block may be skipped silently")
		// What the function scans must be what it decodes: report.Scan
		// skips values that LooksLikePEM rejects.
		require.True(t, LooksLikePEM(data), "a value with PEM blocks must look like PEM")
		for _, typ := range d.SkippedTypes {
			require.NotEqual(t, "CERTIFICATE", typ)
		}
		now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		for _, c := range d.Certificates {
			_ = IsCA(c)
			_ = DaysLeft(c, now)
			require.NotEmpty(t, Describe(c))
		}
		if len(d.Certificates) == 0 {
			return
		}
		// The canonical encoding holds exactly the certificates, nothing
		// else, and is stable.
		enc := EncodePEM(d.Certificates)
		require.NotContains(t, string(enc), "PRIVATE KEY")
		again, err := DecodePEM(enc)
		require.NoError(t, err, "the canonical encoding must decode")
		require.Empty(t, again.SkippedTypes)
		require.Len(t, again.Certificates, len(d.Certificates))
		for i := range d.Certificates {
			require.Equal(t, FingerprintOf(d.Certificates[i]), FingerprintOf(again.Certificates[i]))
		}
		require.True(t, bytes.Equal(enc, EncodePEM(again.Certificates)), "encoding must be canonical")
		set := NewSet(d.Certificates...)
		require.LessOrEqual(t, set.Len(), len(d.Certificates))
		for _, c := range d.Certificates {
			require.True(t, set.Has(c))
		}
	})
}
