package pki

import (
	"crypto/x509"
	"errors"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

func TestSelfSigned(t *testing.T) {
	root := testpki.NewCA("root", testpki.Date(2026, 1, 1), testpki.Days(365))
	sha1Root := testpki.NewSHA1CA("sha1-root", testpki.Date(2020, 1, 1), testpki.Days(3650))
	cases := []struct {
		name string
		cert *x509.Certificate
		want bool
	}{
		{"a root", root.Cert, true},
		{"a SHA-1 root: CheckSignature verifies SHA-1", sha1Root.Cert, true},
		{"a leaf", testpki.NewLeaf("leaf", root, testpki.Date(2026, 1, 1), testpki.Days(30)).Cert, false},
		{"an intermediate", testpki.NewIntermediate("issuer", "", root, testpki.Date(2026, 1, 1), testpki.Days(30)).Cert, false},
		{"the same name, another key", testpki.NewCrossSigned("root-next", root, testpki.Date(2026, 6, 1), testpki.Days(365)).Cert, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := SelfSigned(tc.cert); got != tc.want {
				t.Errorf("SelfSigned = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestRejectedSignature(t *testing.T) {
	root := testpki.NewCA("root", testpki.Date(2026, 1, 1), testpki.Days(365))
	sha1Root := testpki.NewSHA1CA("sha1-root", testpki.Date(2020, 1, 1), testpki.Days(3650))
	if err := RejectedSignature(root.Cert); err != nil {
		t.Errorf("Ed25519: %v", err)
	}
	var insecure x509.InsecureAlgorithmError
	for _, c := range []*x509.Certificate{sha1Root.Cert, testpki.NewSHA1Leaf("svc", sha1Root, testpki.Date(2026, 1, 1), testpki.Days(30)).Cert} {
		if err := RejectedSignature(c); !errors.As(err, &insecure) {
			t.Errorf("%s: %v, want an insecure algorithm", c.Subject, err)
		}
	}
	unknown := *root.Cert
	unknown.SignatureAlgorithm = x509.UnknownSignatureAlgorithm
	if err := RejectedSignature(&unknown); !errors.Is(err, x509.ErrUnsupportedAlgorithm) {
		t.Errorf("unknown algorithm: %v", err)
	}
}

// Issued says who issued a certificate, SHA-1 signatures included: a
// SHA-1 leaf beside its CA was issued by it, though no chain through it
// verifies in Go.
func TestIssued(t *testing.T) {
	root := testpki.NewCA("root", testpki.Date(2026, 1, 1), testpki.Days(365))
	other := testpki.NewCA("other", testpki.Date(2026, 1, 1), testpki.Days(365))
	sha1Root := testpki.NewSHA1CA("sha1-root", testpki.Date(2020, 1, 1), testpki.Days(3650))
	leaf := testpki.NewLeaf("leaf", root, testpki.Date(2026, 1, 1), testpki.Days(30))
	sha1Leaf := testpki.NewSHA1Leaf("svc", sha1Root, testpki.Date(2026, 1, 1), testpki.Days(30))
	cross := testpki.NewCrossSigned("root-next", root, testpki.Date(2026, 6, 1), testpki.Days(365))
	for _, tc := range []struct {
		name     string
		ca, cert *x509.Certificate
		want     bool
	}{
		{"a leaf by its CA", root.Cert, leaf.Cert, true},
		{"a leaf by another CA", other.Cert, leaf.Cert, false},
		{"a SHA-1 leaf by its CA", sha1Root.Cert, sha1Leaf.Cert, true},
		{"the same name, another key, by its parent", root.Cert, cross.Cert, true},
		{"the same name, another key, by itself", cross.Cert, cross.Cert, false},
	} {
		if got := Issued(tc.ca, tc.cert); got != tc.want {
			t.Errorf("%s: Issued = %t, want %t", tc.name, got, tc.want)
		}
	}
}
