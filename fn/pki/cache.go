package pki

import (
	"crypto/sha256"
	"crypto/x509"
)

// Cache parses each distinct certificate once. A trust bundle fanned out to
// fifty namespaces holds the same few certificates fifty times; with a
// cache they are hashed fifty times (cheap) and parsed once (not cheap), and
// every occurrence shares one *x509.Certificate. The zero value is not
// usable; call NewCache. A nil *Cache parses every value anew. Callers must
// treat the certificates as read-only.
type Cache struct {
	certs map[Fingerprint]*x509.Certificate
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{certs: map[Fingerprint]*x509.Certificate{}}
}

// DecodePEM is DecodePEM with parsed certificates shared through the cache.
func (c *Cache) DecodePEM(data []byte) (Decoded, error) {
	return strict(scanPEM(data, c.Parse, 1))
}

// ScanPEM is ScanPEM with parsed certificates shared through the cache.
func (c *Cache) ScanPEM(data []byte) (Decoded, []error) {
	return scanPEM(data, c.Parse, maxProblems)
}

// Parse returns the certificate of der, parsing it only the first time
// these bytes are seen. A parse failure is not cached.
func (c *Cache) Parse(der []byte) (*x509.Certificate, error) {
	if c == nil {
		return x509.ParseCertificate(der)
	}
	fp := Fingerprint(sha256.Sum256(der))
	if cert, ok := c.certs[fp]; ok {
		return cert, nil
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c.certs[fp] = cert
	return cert, nil
}

// Len returns the number of distinct certificates parsed.
func (c *Cache) Len() int { return len(c.certs) }
