package testpki

import (
	"bytes"
	"crypto/x509"
	"errors"
	"testing"
)

func TestCertificatesAreDeterministic(t *testing.T) {
	a := NewCA("ca", Date(2026, 1, 1), Days(10))
	b := NewCA("ca", Date(2026, 1, 1), Days(10))
	if !bytes.Equal(a.PEM(), b.PEM()) {
		t.Fatal("the same CA arguments gave different certificates")
	}
	if !bytes.Equal(NewLeaf("l", a, Date(2026, 1, 1), Days(5)).PEM(), NewLeaf("l", b, Date(2026, 1, 1), Days(5)).PEM()) {
		t.Fatal("the same leaf arguments gave different certificates")
	}
	if err := NewLeaf("l", a, Date(2026, 1, 1), Days(5)).Cert.CheckSignatureFrom(a.Cert); err != nil {
		t.Fatalf("leaf does not verify against its CA: %v", err)
	}
}

// The SHA-1 fixtures are what they claim: deterministic, ecdsa-with-SHA1,
// refused by crypto/x509 in a chain, and sound when checked by hand.
func TestSHA1FixturesAreSHA1(t *testing.T) {
	ca := NewSHA1CA("old", Date(2020, 1, 1), Days(3650))
	if again := NewSHA1CA("old", Date(2020, 1, 1), Days(3650)); !bytes.Equal(ca.PEM(), again.PEM()) {
		t.Fatal("the same SHA-1 CA arguments gave different certificates")
	}
	if ca.Cert.SignatureAlgorithm != x509.ECDSAWithSHA1 {
		t.Fatalf("algorithm %v", ca.Cert.SignatureAlgorithm)
	}
	leaf := NewSHA1Leaf("svc", ca, Date(2026, 1, 1), Days(90))
	var insecure x509.InsecureAlgorithmError
	if err := leaf.Cert.CheckSignatureFrom(ca.Cert); !errors.As(err, &insecure) {
		t.Fatalf("CheckSignatureFrom: %v, want an insecure algorithm", err)
	}
	// CheckSignature allows SHA-1 (it is for CSRs and CRLs): the
	// signatures are sound.
	if err := ca.Cert.CheckSignature(ca.Cert.SignatureAlgorithm, ca.Cert.RawTBSCertificate, ca.Cert.Signature); err != nil {
		t.Fatalf("self-signature: %v", err)
	}
	if err := ca.Cert.CheckSignature(leaf.Cert.SignatureAlgorithm, leaf.Cert.RawTBSCertificate, leaf.Cert.Signature); err != nil {
		t.Fatalf("leaf signature: %v", err)
	}
}

func TestCrossSignedNamesItselfAndNeedsItsParent(t *testing.T) {
	old := NewCA("anchor", Date(2026, 1, 1), Days(365))
	next := NewCrossSigned("anchor-next", old, Date(2026, 6, 1), Days(365))
	if !bytes.Equal(next.Cert.RawIssuer, next.Cert.RawSubject) || !bytes.Equal(next.Cert.RawSubject, old.Cert.RawSubject) {
		t.Fatal("the cross-signed CA does not carry its parent's name as subject and issuer")
	}
	if err := next.Cert.CheckSignatureFrom(next.Cert); err == nil {
		t.Fatal("the cross-signed CA verifies against itself")
	}
	if err := next.Cert.CheckSignatureFrom(old.Cert); err != nil {
		t.Fatalf("the cross-signed CA does not verify against its parent: %v", err)
	}
}
