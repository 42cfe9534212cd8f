package truststore

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	gopkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

var (
	day0 = testpki.Date(2026, 1, 1)
	caA  = testpki.NewCA("gateway-ca", day0, testpki.Days(365))
	caB  = testpki.NewCA("gateway-ca-next", day0.AddDate(0, 3, 0), testpki.Days(365))
	caC  = testpki.NewCA("extra-root", day0.AddDate(-1, 0, 0), testpki.Days(3650))
	// caA2 has caA's subject (a renewed CA of the same name): its alias must
	// still differ.
	caA2 = testpki.NewCA("gateway-ca", day0.AddDate(0, 6, 0), testpki.Days(365))
)

// ecdsaCA returns a self-signed ECDSA P-256 CA, the most common key type in
// the wild (testpki only makes Ed25519), generated at test time.
func ecdsaCA(t *testing.T, cn string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(42),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             day0,
		NotAfter:              day0.AddDate(5, 0, 0),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

type encoderCase struct {
	name      string
	enc       Encoder
	storetype string // keytool -storetype
	password  string
}

func encoderCases() []encoderCase {
	return []encoderCase{
		{"pkcs12 with password", PKCS12{Password: "changeit"}, "PKCS12", "changeit"},
		{"pkcs12 without password", PKCS12{}, "PKCS12", ""},
		{"jks", JKS{Password: "changeit"}, "JKS", "changeit"},
		{"jks other password", JKS{Password: "s3cr3t-but-public"}, "JKS", "s3cr3t-but-public"},
	}
}

func TestEncodeIsDeterministic(t *testing.T) {
	set := []*x509.Certificate{caA.Cert, caB.Cert, caC.Cert}
	for _, tc := range encoderCases() {
		t.Run(tc.name, func(t *testing.T) {
			first := mustEncode(t, tc.enc, set)
			second := mustEncode(t, tc.enc, set)
			if !bytes.Equal(first, second) {
				t.Fatalf("two encodes of the same set differ (%d vs %d bytes)", len(first), len(second))
			}
			reordered := mustEncode(t, tc.enc, []*x509.Certificate{caC.Cert, caA.Cert, caB.Cert, caA.Cert})
			if !bytes.Equal(first, reordered) {
				t.Fatalf("the same set in another order, with a duplicate, encodes differently")
			}
			other := mustEncode(t, tc.enc, []*x509.Certificate{caA.Cert, caB.Cert})
			if bytes.Equal(first, other) {
				t.Fatalf("a different set encodes to the same bytes")
			}
			swapped := mustEncode(t, tc.enc, []*x509.Certificate{caA.Cert, caB.Cert, caA2.Cert})
			if bytes.Equal(first, swapped) || bytes.Equal(other, swapped) {
				t.Fatalf("replacing one certificate does not change the bytes")
			}
		})
	}
}

func TestPasswordChangesBytes(t *testing.T) {
	set := []*x509.Certificate{caA.Cert}
	for _, pair := range [][2]Encoder{
		{PKCS12{Password: "one"}, PKCS12{Password: "two"}},
		{PKCS12{}, PKCS12{Password: "two"}},
		{JKS{Password: "one"}, JKS{Password: "two"}},
	} {
		if bytes.Equal(mustEncode(t, pair[0], set), mustEncode(t, pair[1], set)) {
			t.Errorf("%#v and %#v give the same bytes", pair[0], pair[1])
		}
	}
}

func TestEncodeEmptySetFails(t *testing.T) {
	for _, tc := range encoderCases() {
		if _, err := tc.enc.Encode(nil); err == nil {
			t.Errorf("%s: encoding no certificates succeeded", tc.name)
		}
	}
}

// TestRoundTrip reads the stores back with the same libraries: every
// certificate is there, under its alias, as a trusted entry.
func TestRoundTrip(t *testing.T) {
	ec := ecdsaCA(t, "ECDSA Root")
	set := []*x509.Certificate{caA.Cert, caB.Cert, caC.Cert, ec}
	want := fingerprints(set)

	t.Run("pkcs12", func(t *testing.T) {
		for _, pw := range []string{"", "changeit"} {
			data := mustEncode(t, PKCS12{Password: pw}, set)
			got, err := gopkcs12.DecodeTrustStore(data, pw)
			if err != nil {
				t.Fatalf("password %q: decode: %v", pw, err)
			}
			if g := fingerprints(got); !equalStrings(g, want) {
				t.Errorf("password %q: got %v, want %v", pw, g, want)
			}
			if pw != "" {
				if _, err := gopkcs12.DecodeTrustStore(data, "wrong"); err == nil {
					t.Errorf("decoding with a wrong password succeeded")
				}
			}
		}
	})
	t.Run("jks", func(t *testing.T) {
		data := mustEncode(t, JKS{Password: "changeit"}, set)
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte("changeit")); err != nil {
			t.Fatalf("load: %v", err)
		}
		var got []string
		for _, c := range set {
			e, err := ks.GetTrustedCertificateEntry(aliasOf(c))
			if err != nil {
				t.Fatalf("alias %s: %v", aliasOf(c), err)
			}
			if !e.CreationTime.Equal(day0.AddDate(0, 3, 0)) {
				t.Errorf("alias %s: creation time %s, want the latest NotBefore %s", aliasOf(c), e.CreationTime.UTC(), day0.AddDate(0, 3, 0))
			}
			got = append(got, pki.FingerprintOf(mustParse(t, e.Certificate.Content)).String())
		}
		sort.Strings(got)
		if !equalStrings(got, want) || len(ks.Aliases()) != len(set) {
			t.Errorf("got %v (%d aliases), want %v", got, len(ks.Aliases()), want)
		}
		if err := keystore.New().Load(bytes.NewReader(data), []byte("wrong")); err == nil {
			t.Errorf("loading with a wrong password succeeded")
		}
	})
}

func TestAliasOf(t *testing.T) {
	noCN := testpki.NewCA("", day0, testpki.Days(1))
	tests := []struct {
		name string
		cert *x509.Certificate
		want string
	}{
		{"common name", caA.Cert, "gateway-ca-"},
		{"spaces and case", ecdsaCA(t, "My Corp Root CA  (G2)"), "my-corp-root-ca-g2-"},
		{"no common name uses subject", noCN.Cert, "o-rotate-certs-test-"},
		{"only punctuation", ecdsaCA(t, "***"), "ca-"},
		{"long name is cut", ecdsaCA(t, strings.Repeat("abcdefgh ", 10)), "abcdefgh-abcdefgh-abcdefgh-abcdefgh-abcdefgh-abc-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := aliasOf(tc.cert)
			want := tc.want + pki.FingerprintOf(tc.cert).Short()
			if got != want {
				t.Errorf("Alias = %q, want %q", got, want)
			}
			if got != strings.ToLower(got) {
				t.Errorf("alias %q is not lowercase", got)
			}
		})
	}
	if aliasOf(caA.Cert) == aliasOf(caA2.Cert) {
		t.Errorf("two CAs share alias %q", aliasOf(caA.Cert))
	}
}

// TestKeytoolListsEveryCertificate has the JDK's keytool read each store and
// checks that it lists every certificate, by SHA-256 fingerprint, as a
// trusted certificate entry.
func TestKeytoolListsEveryCertificate(t *testing.T) {
	keytool := lookTool(t, "keytool")
	set := []*x509.Certificate{caA.Cert, caB.Cert, caC.Cert, caA2.Cert, ecdsaCA(t, "ECDSA Root")}
	for _, tc := range encoderCases() {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store")
			if err := os.WriteFile(path, mustEncode(t, tc.enc, set), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"-list", "-v", "-keystore", path, "-storetype", tc.storetype}
			if tc.password != "" {
				args = append(args, "-storepass", tc.password)
			}
			cmd := exec.Command(keytool, args...)
			cmd.Stdin = strings.NewReader("\n") // an empty answer to a password prompt
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("keytool %v: %v\n%s", args, err, out)
			}
			text := string(out)
			if want := "Your keystore contains 5 entries"; !strings.Contains(text, want) {
				t.Errorf("keytool output lacks %q:\n%s", want, text)
			}
			if n := strings.Count(text, "Entry type: trustedCertEntry"); n != len(set) {
				t.Errorf("keytool lists %d trusted entries, want %d:\n%s", n, len(set), text)
			}
			for _, c := range set {
				if fp := colonHex(c); !strings.Contains(text, "SHA256: "+fp) {
					t.Errorf("keytool does not list %s (SHA256 %s)", pki.Subject(c), fp)
				}
				if !strings.Contains(text, "Alias name: "+aliasOf(c)) {
					t.Errorf("keytool does not list alias %s", aliasOf(c))
				}
			}
			if strings.Contains(text, "has NOT been verified") {
				t.Errorf("keytool did not verify the store's integrity:\n%s", text)
			}
		})
	}
}

// TestOpenSSLReadsPKCS12 has OpenSSL 3 read the PKCS#12 stores, without
// -legacy, and compares the certificates it prints with the set.
func TestOpenSSLReadsPKCS12(t *testing.T) {
	openssl := lookTool(t, "openssl")
	set := []*x509.Certificate{caA.Cert, caB.Cert, caC.Cert, ecdsaCA(t, "ECDSA Root")}
	for _, pw := range []string{"changeit", ""} {
		t.Run("password "+pw, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.p12")
			if err := os.WriteFile(path, mustEncode(t, PKCS12{Password: pw}, set), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"pkcs12", "-in", path, "-nokeys", "-passin", "pass:" + pw}
			out, err := exec.Command(openssl, args...).Output()
			if err != nil {
				var stderr []byte
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = ee.Stderr
				}
				t.Fatalf("openssl %v: %v\n%s", args, err, stderr)
			}
			dec, err := pki.DecodePEM(out)
			if err != nil {
				t.Fatalf("openssl output: %v\n%s", err, out)
			}
			if got, want := fingerprints(dec.Certificates), fingerprints(set); !equalStrings(got, want) {
				t.Errorf("openssl printed %v, want %v", got, want)
			}
			for _, c := range set {
				if !strings.Contains(string(out), "friendlyName: "+aliasOf(c)) {
					t.Errorf("openssl output lacks friendlyName %s", aliasOf(c))
				}
			}
			if pw != "" {
				bad := exec.Command(openssl, "pkcs12", "-in", path, "-nokeys", "-passin", "pass:wrong")
				if err := bad.Run(); err == nil {
					t.Errorf("openssl accepted a wrong password")
				}
			}
		})
	}
}

func TestSeededReaderIsAStream(t *testing.T) {
	es, err := entries([]*x509.Certificate{caA.Cert})
	if err != nil {
		t.Fatal(err)
	}
	whole := make([]byte, 100)
	_, _ = newSeededReader("x", es).Read(whole)
	r := newSeededReader("x", es)
	var pieces []byte
	for _, n := range []int{1, 31, 2, 40, 26} {
		b := make([]byte, n)
		_, _ = r.Read(b)
		pieces = append(pieces, b...)
	}
	if !bytes.Equal(whole, pieces) {
		t.Errorf("reading in pieces gives another stream")
	}
	other := make([]byte, 100)
	_, _ = newSeededReader("y", es).Read(other)
	if bytes.Equal(whole, other) {
		t.Errorf("another label gives the same stream")
	}
}

func lookTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found in PATH (install a JDK / OpenSSL to run this interoperability test)", name)
	}
	return path
}

func mustEncode(t *testing.T, enc Encoder, certs []*x509.Certificate) []byte {
	t.Helper()
	b, err := enc.Encode(certs)
	if err != nil {
		t.Fatalf("%T: %v", enc, err)
	}
	return b
}

func mustParse(t *testing.T, der []byte) *x509.Certificate {
	t.Helper()
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fingerprints(certs []*x509.Certificate) []string {
	var out []string
	for _, c := range certs {
		out = append(out, pki.FingerprintOf(c).String())
	}
	sort.Strings(out)
	return out
}

func colonHex(c *x509.Certificate) string {
	hex := strings.ToUpper(pki.FingerprintOf(c).String())
	parts := make([]string, 0, len(hex)/2)
	for i := 0; i < len(hex); i += 2 {
		parts = append(parts, hex[i:i+2])
	}
	return strings.Join(parts, ":")
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
