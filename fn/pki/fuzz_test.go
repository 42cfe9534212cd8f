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
	for _, seed := range decodePEMSeeds() {
		f.Add(seed)
	}
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
		requireNothingSkipped(t, data, d)
		now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		for _, c := range d.Certificates {
			_ = IsCA(c)
			_ = DaysLeft(c, now)
			require.NotEmpty(t, Describe(c))
		}
		if len(d.Certificates) > 0 {
			requireCanonical(t, d)
		}
	})
}

// decodePEMSeeds are FuzzDecodePEM's seeds: sound bundles, a key beside
// a CA, truncated and empty blocks, and broken blocks between sound ones,
// which encoding/pem skips: a damaged body line, a misspelt END line, a
// misspelt BEGIN line, a body with no BEGIN line, an indented BEGIN line.
func decodePEMSeeds() [][]byte {
	ca := testpki.NewCA("fuzz-ca", testpki.Date(2026, 1, 1), testpki.Days(365))
	leaf := testpki.NewLeaf("fuzz-leaf", ca, testpki.Date(2026, 1, 1), testpki.Days(90))
	other := testpki.NewCA("fuzz-other", testpki.Date(2026, 1, 1), testpki.Days(365))
	lines := strings.SplitAfter(string(leaf.PEM()), "\n")
	broken := func(i int, with string) []byte {
		l := append([]string(nil), lines...)
		l[i] = with
		return append(append(ca.PEM(), strings.Join(l, "")...), other.PEM()...)
	}
	return [][]byte{
		ca.PEM(),
		append(ca.PEM(), leaf.PEM()...),
		append(leaf.KeyPEM(), ca.PEM()...),
		append(ca.PEM(), ca.PEM()...),
		[]byte("# comment\n" + string(ca.PEM()) + "\ntrailing text\n"),
		ca.PEM()[:len(ca.PEM())/2],
		[]byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"),
		[]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
		[]byte("-----BEGIN \x00\xff-----\n\x01\x02\n-----END \x00\xff-----\n"),
		{},
		broken(2, "!!"+lines[2][2:]),
		broken(len(lines)-2, "-----END CERTIFICATE----\n"),
		broken(0, "----BEGIN CERTIFICATE-----\n"),
		broken(0, ""),
		broken(0, "  -----BEGIN CERTIFICATE-----\n"),
		append(append(ca.PEM(), "-----END CERTIFICATE-----\n"...), other.PEM()...),
	}
}

// requireNothingSkipped: every line-start BEGIN line opened a block that
// was read (a certificate or a skipped type), and what the function scans
// is what it decodes (inventory.Scan skips values LooksLikePEM rejects).
func requireNothingSkipped(t *testing.T, data []byte, d Decoded) {
	begins := bytes.Count(data, []byte("\n-----BEGIN "))
	if bytes.HasPrefix(data, []byte("-----BEGIN ")) {
		begins++
	}
	require.Equal(t, begins, len(d.Certificates)+len(d.SkippedTypes), "no block may be skipped silently")
	require.True(t, LooksLikePEM(data), "a value with PEM blocks must look like PEM")
	for _, typ := range d.SkippedTypes {
		require.NotEqual(t, "CERTIFICATE", typ)
	}
}

// requireCanonical: the canonical encoding holds exactly the
// certificates, nothing else, and is stable.
func requireCanonical(t *testing.T, d Decoded) {
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
}
