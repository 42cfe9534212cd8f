package trustdiff

import (
	"crypto/x509"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// CertRef names a certificate in a break.
type CertRef struct {
	Resource Resource `json:"resource"`
	Key      string   `json:"key"`
	Subject  string   `json:"subject"`
	SHA256   string   `json:"sha256"`
	// Package is the directory of the policy package that holds it, ""
	// when none does.
	Package string `json:"package,omitempty"`
}

// CARef names the CA a certificate needs; SHA256 is empty when no object
// of either tree holds it.
type CARef struct {
	Subject string `json:"subject"`
	SHA256  string `json:"sha256,omitempty"`
}

// TrustRef names the trust object that lost or lacks a CA.
type TrustRef struct {
	Resource Resource `json:"resource"`
	Field    string   `json:"field"`
	// Package is the directory of the policy package that holds it, ""
	// when none does.
	Package string `json:"package,omitempty"`
}

// Break is a certificate the change makes a reader reject.
type Break struct {
	Certificate CertRef  `json:"certificate"`
	Needs       CARef    `json:"needs"`
	Trust       TrustRef `json:"trust"`
	Readers     []Reader `json:"consumers"`
	// Reason says which case it is, in words.
	Reason string `json:"reason"`
	// Domain is the trust domain the certificate's package and the trust
	// object's bundle share when they are in different packages: a break
	// across clusters.
	Domain string `json:"domain,omitempty"`
	// AlsoAt are the other places that hold the same certificate (each
	// cluster of a repository that holds a copy): one break, named where
	// it is nearest the trust object.
	AlsoAt []CertRef `json:"alsoAt,omitempty"`
}

// side is one Model with what verifying against its trust objects needs.
type side struct {
	model *Model
	inter *x509.CertPool
	// bySubject maps a CA subject to the trust objects holding a CA of
	// that subject: which objects a certificate may chain to.
	bySubject map[string][]*TrustObject
	inters    map[string][]*x509.Certificate
}

func newSide(t *Model) *side {
	s := &side{model: t, inter: x509.NewCertPool(), bySubject: map[string][]*TrustObject{}, inters: map[string][]*x509.Certificate{}}
	for _, c := range t.intermediates {
		s.inter.AddCert(c)
		s.inters[string(c.RawSubject)] = append(s.inters[string(c.RawSubject)], c)
	}
	for _, o := range t.Trust {
		for _, c := range o.cas {
			s.bySubject[string(c.RawSubject)] = append(s.bySubject[string(c.RawSubject)], o)
		}
	}
	return s
}

// verifier verifies certificates against trust objects at one time, each
// pair once.
type verifier struct {
	now   time.Time
	pools map[string]*x509.CertPool
	seen  map[verifyKey]*x509.Certificate
	sigs  map[*TrustObject]string
	shas  map[*x509.Certificate]string
}

// sha is sha(c), computed once per certificate.
func (v *verifier) sha(c *x509.Certificate) string {
	s, ok := v.shas[c]
	if !ok {
		s = sha(c)
		v.shas[c] = s
	}
	return s
}

// verifyKey is one verification by content: the certificate, the CAs of
// the trust object and the side whose intermediates build the chain. A
// repository of many clusters holds the same certificates and bundles
// once per cluster; each is verified once.
type verifyKey struct {
	cert, trust string
	side        *side
}

// sig returns the identity of o's set of CAs.
func (v *verifier) sig(o *TrustObject) string {
	s, ok := v.sigs[o]
	if !ok {
		ks := slices.Sorted(maps.Keys(shas(o)))
		s = strings.Join(ks, ",")
		v.sigs[o] = s
	}
	return s
}

// anchor returns the CA of o that c chains to at v.now through the
// intermediates of s, nil when it does not verify. A nil o holds nothing.
func (v *verifier) anchor(c *x509.Certificate, o *TrustObject, s *side) *x509.Certificate {
	if o == nil || len(o.cas) == 0 {
		return nil
	}
	k := verifyKey{cert: v.sha(c), trust: v.sig(o), side: s}
	if a, ok := v.seen[k]; ok {
		return a
	}
	pool, ok := v.pools[k.trust]
	if !ok {
		pool = x509.NewCertPool()
		for _, ca := range o.cas {
			pool.AddCert(ca)
		}
		v.pools[k.trust] = pool
	}
	var a *x509.Certificate
	chains, err := c.Verify(x509.VerifyOptions{Roots: pool, Intermediates: s.inter, CurrentTime: v.now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err == nil && len(chains) > 0 {
		chain := chains[0]
		a = chain[len(chain)-1]
	}
	v.seen[k] = a
	return a
}

// candidates returns the keys of the trust objects of either side that c
// may chain to: those holding a CA whose subject names c's issuer or the
// issuer of an intermediate on the way.
func candidates(c *x509.Certificate, sides ...*side) map[string]bool {
	out := map[string]bool{}
	for _, s := range sides {
		issuer, seen := c, map[string]bool{}
		for depth := 0; depth < 8 && issuer != nil && !seen[string(issuer.RawIssuer)]; depth++ {
			seen[string(issuer.RawIssuer)] = true
			for _, o := range s.bySubject[string(issuer.RawIssuer)] {
				out[o.key()] = true
			}
			issuer = s.intermediate(issuer.RawIssuer)
		}
	}
	return out
}

// intermediate returns an intermediate of s with subject raw, nil when none.
func (s *side) intermediate(raw []byte) *x509.Certificate {
	if cs := s.inters[string(raw)]; len(cs) > 0 {
		return cs[0]
	}
	return nil
}

// needs names the CA c needs from trust object o: the anchor it chains to
// through the other side's trust, else its issuer by name.
func needs(c *x509.Certificate, v *verifier, o *TrustObject, sides ...*side) CARef {
	for _, s := range sides {
		for _, other := range s.model.Trust {
			if other == o {
				continue
			}
			if a := v.anchor(c, other, s); a != nil {
				return CARef{Subject: pki.Subject(a), SHA256: sha(a)}
			}
		}
	}
	return CARef{Subject: issuerName(c)}
}

// issuerName is c's issuer in RFC 2253 form.
func issuerName(c *x509.Certificate) string {
	return pki.Subject(&x509.Certificate{Subject: c.Issuer})
}

// certRef names certificate c at its place.
func certRef(c cert) CertRef {
	return CertRef{Resource: c.resource, Key: c.key, Subject: pki.Subject(c.cert), SHA256: sha(c.cert), Package: c.pkgDir}
}
