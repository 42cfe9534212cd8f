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
