// Package testpki makes deterministic certificate authorities and leaves for
// tests, examples and golden fixtures. Keys are Ed25519 keys derived from a
// name, and Ed25519 signatures are deterministic, so the same arguments always
// give byte-identical certificates: fixtures can be regenerated and compared.
//
// It is test support only and never linked into the rotate-certs binary.
package testpki

import (
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// Cert is a certificate with the key that belongs to it.
type Cert struct {
	Cert *x509.Certificate
	Key  ed25519.PrivateKey
}

// KeyFor returns the Ed25519 key derived from name.
func KeyFor(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("rotate-certs testpki " + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func serialFor(name string) *big.Int {
	h := sha256.Sum256([]byte("serial " + name))
	return new(big.Int).SetBytes(h[:16])
}

// NewCA returns a self-signed CA named name, valid from notBefore for
// validity.
func NewCA(name string, notBefore time.Time, validity time.Duration) Cert {
	tmpl := caTemplate(name, pkix.Name{CommonName: name, Organization: []string{"rotate-certs test"}}, notBefore, validity)
	key := KeyFor(name)
	return sign(tmpl, tmpl, key.Public(), key, key)
}

// NewSubjectCA returns a self-signed CA whose key is derived from name and
// whose common name is cn: two generations of an anchor that keep their
// subject (root.linkerd.cluster.local) and change their key.
func NewSubjectCA(name, cn string, notBefore time.Time, validity time.Duration) Cert {
	tmpl := caTemplate(name, pkix.Name{CommonName: cn}, notBefore, validity)
	key := KeyFor(name)
	return sign(tmpl, tmpl, key.Public(), key, key)
}

// NewIntermediate returns a CA signed by parent (an issuer or
// intermediate: Linkerd's identity issuer, Istio's ca-cert.pem), whose key
// is derived from name and whose common name is cn ("" means name),
// allowed to sign leaves only (path length 0).
func NewIntermediate(name, cn string, parent Cert, notBefore time.Time, validity time.Duration) Cert {
	if cn == "" {
		cn = name
	}
	tmpl := caTemplate(name, pkix.Name{CommonName: cn}, notBefore, validity)
	tmpl.MaxPathLenZero = true
	key := KeyFor(name)
	return sign(tmpl, parent.Cert, key.Public(), parent.Key, key)
}

// caTemplate is the template of a CA whose serial is derived from name.
func caTemplate(name string, subject pkix.Name, notBefore time.Time, validity time.Duration) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber:          serialFor(name),
		Subject:               subject,
		NotBefore:             notBefore.UTC(),
		NotAfter:              notBefore.Add(validity).UTC(),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
}

// NewLeaf returns a leaf for name (also its DNS name and, for "127.0.0.1"
// style names, nothing more) signed by ca, usable as TLS server and client
// certificate.
func NewLeaf(name string, ca Cert, notBefore time.Time, validity time.Duration) Cert {
	return NewNamedLeaf(name, name, ca, notBefore, validity)
}

// NewNamedLeaf is NewLeaf with the key derived from name and the common
// and DNS name dnsName.
func NewNamedLeaf(name, dnsName string, ca Cert, notBefore time.Time, validity time.Duration) Cert {
	key := KeyFor(name)
	tmpl := &x509.Certificate{
		SerialNumber:          serialFor(name),
		Subject:               pkix.Name{CommonName: dnsName},
		DNSNames:              []string{dnsName},
		NotBefore:             notBefore.UTC(),
		NotAfter:              notBefore.Add(validity).UTC(),
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	return sign(tmpl, ca.Cert, key.Public(), ca.Key, key)
}

func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer ed25519.PrivateKey, key ed25519.PrivateKey) Cert {
	der, err := x509.CreateCertificate(nil, tmpl, parent, pub, signer)
	if err != nil {
		panic(fmt.Sprintf("testpki: create certificate %q: %v", tmpl.Subject.CommonName, err))
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		panic(fmt.Sprintf("testpki: parse certificate %q: %v", tmpl.Subject.CommonName, err))
	}
	return Cert{Cert: cert, Key: key}
}

// PEM returns the certificate as a PEM block.
func (c Cert) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Cert.Raw})
}

// KeyPEM returns the private key as a PKCS#8 PEM block.
func (c Cert) KeyPEM() []byte {
	der, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// TLS returns the certificate and key as a tls.Certificate.
func (c Cert) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{c.Cert.Raw}, PrivateKey: c.Key, Leaf: c.Cert}
}

// Date returns midnight UTC of the given day.
func Date(year int, month time.Month, day int) time.Time {
	return time.Date(year, month, day, 0, 0, 0, 0, time.UTC)
}

// Days returns n days as a duration.
func Days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }
