package pki

import "crypto/x509"

// Set is an insertion-ordered set of certificates keyed by Fingerprint.
// The zero value is not usable; call NewSet.
type Set struct {
	order []*x509.Certificate
	seen  map[Fingerprint]struct{}
}

// NewSet returns a set holding certs, first occurrence kept.
func NewSet(certs ...*x509.Certificate) *Set {
	s := &Set{seen: make(map[Fingerprint]struct{}, len(certs))}
	for _, c := range certs {
		s.Add(c)
	}
	return s
}

// Add inserts cert unless an identical certificate is present, and reports
// whether it was added.
func (s *Set) Add(cert *x509.Certificate) bool {
	fp := FingerprintOf(cert)
	if _, ok := s.seen[fp]; ok {
		return false
	}
	s.seen[fp] = struct{}{}
	s.order = append(s.order, cert)
	return true
}

// Has reports whether an identical certificate is in the set.
func (s *Set) Has(cert *x509.Certificate) bool {
	_, ok := s.seen[FingerprintOf(cert)]
	return ok
}

// Len returns the number of certificates.
func (s *Set) Len() int { return len(s.order) }

// List returns the certificates in insertion order. The slice is shared;
// callers must not modify it.
func (s *Set) List() []*x509.Certificate { return s.order }
