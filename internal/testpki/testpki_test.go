package testpki

import (
	"bytes"
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
