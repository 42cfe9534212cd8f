package testpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha1" //nolint:gosec // the point: a signature crypto/x509 rejects
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"time"
)

// ECDSACert is a certificate with its ECDSA P-256 key: the key type of
// the certificates signed with SHA-1 here. Ed25519, the package's usual
// key, has no SHA-1 form.
type ECDSACert struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// PEM returns the certificate as a PEM block.
func (c ECDSACert) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Cert.Raw})
}

// ecdsaKeyFor returns the P-256 key derived from name.
func ecdsaKeyFor(name string) *ecdsa.PrivateKey {
	d := sha256.Sum256([]byte("rotate-certs testpki ecdsa " + name))
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d[:])
	if err != nil {
		panic(fmt.Sprintf("testpki: ECDSA key %q: %v", name, err))
	}
	return key
}

// NewSHA1CA returns a self-signed CA named name whose signature is
// ECDSA with SHA-1 (ecdsa-with-SHA1), which crypto/x509 refuses to make
// and to verify in a chain (x509.InsecureAlgorithmError): a CA of the
// SHA-1 era still found in repositories. Signatures are RFC 6979's, so the
// same arguments give the same certificate.
func NewSHA1CA(name string, notBefore time.Time, validity time.Duration) ECDSACert {
	tmpl := caTemplate(name, pkix.Name{CommonName: name, Organization: []string{"rotate-certs test"}}, notBefore, validity)
	key := ecdsaKeyFor(name)
	return ECDSACert{Cert: signSHA1(tmpl, tmpl, &key.PublicKey, key), Key: key}
}

// NewSHA1Leaf returns a leaf for name signed by ca with ECDSA and SHA-1.
func NewSHA1Leaf(name string, ca ECDSACert, notBefore time.Time, validity time.Duration) ECDSACert {
	key := ecdsaKeyFor(name)
	tmpl := &x509.Certificate{
		SerialNumber: serialFor(name), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: notBefore.UTC(), NotAfter: notBefore.Add(validity).UTC(), BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	return ECDSACert{Cert: signSHA1(tmpl, ca.Cert, &key.PublicKey, ca.Key), Key: key}
}

// oidECDSAWithSHA1 is ecdsa-with-SHA1 (RFC 3279 2.2.3), with no
// parameters.
var oidECDSAWithSHA1 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 1}

// signSHA1 makes the certificate crypto/x509 would make with ECDSA and
// SHA-256, then writes ecdsa-with-SHA1 into its TBSCertificate and signs
// that with SHA-1 by hand.
func signSHA1(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) *x509.Certificate {
	tmpl.SignatureAlgorithm = x509.ECDSAWithSHA256
	der, err := x509.CreateCertificate(nil, tmpl, parent, pub, signer)
	if err != nil {
		panic(fmt.Sprintf("testpki: create certificate %q: %v", tmpl.Subject.CommonName, err))
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	alg, err := asn1.Marshal(pkix.AlgorithmIdentifier{Algorithm: oidECDSAWithSHA1})
	if err != nil {
		panic(err)
	}
	tbs := withSignatureAlgorithm(cert.RawTBSCertificate, alg)
	digest := sha1.Sum(tbs) //nolint:gosec // see the import
	sig, err := signer.Sign(nil, digest[:], crypto.SHA1)
	if err != nil {
		panic(fmt.Sprintf("testpki: SHA-1 signature %q: %v", tmpl.Subject.CommonName, err))
	}
	out, err := asn1.Marshal(struct {
		TBS       asn1.RawValue
		Algorithm asn1.RawValue
		Signature asn1.BitString
	}{asn1.RawValue{FullBytes: tbs}, asn1.RawValue{FullBytes: alg}, asn1.BitString{Bytes: sig, BitLength: 8 * len(sig)}})
	if err != nil {
		panic(err)
	}
	cert, err = x509.ParseCertificate(out)
	if err != nil {
		panic(fmt.Sprintf("testpki: parse SHA-1 certificate %q: %v", tmpl.Subject.CommonName, err))
	}
	return cert
}

// withSignatureAlgorithm returns the DER TBSCertificate tbs with its
// signature field (the first SEQUENCE: after the [0] version and the
// serial number) replaced by alg.
func withSignatureAlgorithm(tbs, alg []byte) []byte {
	var seq asn1.RawValue
	if _, err := asn1.Unmarshal(tbs, &seq); err != nil {
		panic(err)
	}
	var body []byte
	done := false
	for rest := seq.Bytes; len(rest) > 0; {
		var e asn1.RawValue
		var err error
		if rest, err = asn1.Unmarshal(rest, &e); err != nil {
			panic(err)
		}
		if !done && e.Class == asn1.ClassUniversal && e.Tag == asn1.TagSequence {
			e.FullBytes, done = alg, true
		}
		body = append(body, e.FullBytes...)
	}
	out, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: body})
	if err != nil {
		panic(err)
	}
	return out
}

// NewCrossSigned returns a CA with parent's subject and a key of its own
// (derived from name), signed by parent: a re-keyed anchor cross-signed by
// the anchor it replaces. It names itself as issuer and is not
// self-signed: it needs parent.
func NewCrossSigned(name string, parent Cert, notBefore time.Time, validity time.Duration) Cert {
	tmpl := caTemplate(name, parent.Cert.Subject, notBefore, validity)
	tmpl.RawSubject = parent.Cert.RawSubject
	key := KeyFor(name)
	return sign(tmpl, parent.Cert, key.Public(), parent.Key, key)
}
