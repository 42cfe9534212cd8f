package pki

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"math/big"
)

// SelfSigned reports whether cert is self-signed: it names itself as
// issuer and its own key verifies its signature. A certificate that only
// names itself (a re-keyed anchor signed by the anchor it replaces, which
// keeps the subject) is not: it needs the CA whose key signed it. The
// check is crypto/x509's CheckSignature, which verifies SHA-1 too (a
// SHA-1 root is still a root); a signature of an algorithm crypto/x509
// does not verify at all (MD5, DSA) is taken at its name.
func SelfSigned(cert *x509.Certificate) bool {
	if !bytes.Equal(cert.RawIssuer, cert.RawSubject) {
		return false
	}
	err := checkIssued(cert, cert)
	var insecure x509.InsecureAlgorithmError
	return err == nil || errors.As(err, &insecure) || errors.Is(err, x509.ErrUnsupportedAlgorithm)
}

// Issued reports whether ca issued cert: cert names ca's subject as
// issuer and ca's key verifies cert's signature, SHA-1 included - who
// issued a certificate, not whether a chain through it verifies
// (RejectedSignature says that).
func Issued(ca, cert *x509.Certificate) bool {
	return bytes.Equal(cert.RawIssuer, ca.RawSubject) && checkIssued(ca, cert) == nil
}

// checkIssued verifies cert's signature with ca's key, as
// crypto/x509's CheckSignature does (SHA-1 allowed, MD5 not).
func checkIssued(ca, cert *x509.Certificate) error {
	return ca.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature)
}

// RejectedSignature returns the error crypto/x509 gives any certificate
// signed with cert's signature algorithm when it verifies a chain
// (x509.InsecureAlgorithmError for SHA-1 and MD5,
// x509.ErrUnsupportedAlgorithm for one it does not implement), nil when
// it verifies signatures of that algorithm. Whatever trusts its issuer,
// Go never verifies a chain through such a signature; only a root's own
// signature is not checked.
func RejectedSignature(cert *x509.Certificate) error {
	// A CA key of another kind than the algorithm's: crypto/x509 judges
	// the algorithm first, then refuses the key as a mismatch, without
	// verifying anything.
	probe := &x509.Certificate{BasicConstraintsValid: true, IsCA: true,
		PublicKeyAlgorithm: x509.Ed25519, PublicKey: ed25519.PublicKey(make([]byte, ed25519.PublicKeySize))}
	if cert.SignatureAlgorithm == x509.PureEd25519 {
		probe.PublicKeyAlgorithm, probe.PublicKey = x509.RSA, &rsa.PublicKey{N: big.NewInt(1), E: 65537}
	}
	err := cert.CheckSignatureFrom(probe)
	var insecure x509.InsecureAlgorithmError
	if errors.As(err, &insecure) || errors.Is(err, x509.ErrUnsupportedAlgorithm) {
		return err
	}
	return nil
}
