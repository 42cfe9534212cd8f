package anchors

import (
	"crypto/x509"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Origin is a current CA of a trust domain and where it was read, for
// messages ("Secret linkerd/linkerd-trust-anchor data.ca.crt in package
// clusters/east").
type Origin struct {
	Cert  *x509.Certificate
	Where string
}

// Domain is a trust domain as a render that sees the whole repository knows
// it: the bundles of every package that name the domain trust the union of
// the CAs current in their sources, and a previous CA leaves none of them
// while a certificate of any of their packages still chains only to it. A
// Domain is built once (NewDomain) and read by every package's render,
// concurrently: it is never modified after NewDomain returns.
type Domain struct {
	// name is the domain's name (spec.trustBundles[].domain).
	name string
	// current are the CAs current in the sources of the domain's bundles,
	// every package's, each once, in the order given to NewDomain.
	current []Origin
	// needs maps a CA that is not current to the valid certificates of
	// the domain's packages that chain to it and to no current CA, in the
	// order of the held certificates given to NewDomain.
	needs map[pki.Fingerprint][]Held
}

// NewDomain builds domain name from the CAs current in its sources
// (current) and the certificates of every package of the domain (held:
// each with its Package set, and Where naming the package), at now. verify
// is the signature check (nil: verifies).
func NewDomain(name string, current []Origin, held []Held, verify func(ca, cert *x509.Certificate) bool, now time.Time) *Domain {
	d := &Domain{name: name, needs: map[pki.Fingerprint][]Held{}}
	cur := pki.NewSet()
	var certs []*x509.Certificate
	for _, o := range current {
		if cur.Add(o.Cert) {
			d.current = append(d.current, o)
			certs = append(certs, o.Cert)
		}
	}
	x := NewChainIndex(held, verify)
	roots := x.rootSet(certs)
	for _, h := range held {
		c := h.Cert
		fp := pki.FingerprintOf(c)
		if !pki.IsCA(c) || cur.Has(c) || pki.Expired(c, now) {
			continue
		}
		if _, done := d.needs[fp]; done {
			continue
		}
		all := append(certs[:len(certs):len(certs)], c)
		d.needs[fp] = x.dependents(c, roots, pki.NewSet(all...), x.key(all), now)
	}
	return d
}

// needed returns the certificates of the domain's packages that chain to ca
// and to no current CA of the domain (those that expired by now left
// out), in package order. The slice may be shared: read only.
func (d *Domain) needed(ca *x509.Certificate, now time.Time) []Held {
	if d == nil {
		return nil
	}
	deps := d.needs[pki.FingerprintOf(ca)]
	for i, h := range deps {
		if pki.Expired(h.Cert, now) {
			return unexpired(deps[i:], deps[:i], now)
		}
	}
	return deps
}

func unexpired(rest, kept []Held, now time.Time) []Held {
	out := append([]Held(nil), kept...)
	for _, h := range rest {
		if !pki.Expired(h.Cert, now) {
			out = append(out, h)
		}
	}
	return out
}

// DomainView is what one package's render knows of its bundle's domain: the
// domain seen whole (Domain set), or only the package itself (a partial
// view: a render below the repository's top, a kustomize, kpt or Argo CD
// run). A view belongs to one render: it is not safe for concurrent use.
type DomainView struct {
	// Name is the domain's name.
	Name string
	// Domain is the whole domain; nil in a partial view.
	Domain *Domain
	// Package is the package being rendered, as the held certificates of
	// the domain name it: its own certificates are the render's, not the
	// domain's.
	Package string
	// elsewhere remembers heldElsewhere's answers by CA.
	elsewhere map[*x509.Certificate][]Held
}

// Whole reports whether the render sees the whole domain.
func (v *DomainView) Whole() bool { return v != nil && v.Domain != nil }

// heldElsewhere returns the certificates of the domain's other packages that
// chain to ca and to no current CA of the domain, valid at now; nil for a
// partial view.
func (v *DomainView) heldElsewhere(ca *x509.Certificate, now time.Time) []Held {
	if !v.Whole() {
		return nil
	}
	if out, ok := v.elsewhere[ca]; ok {
		return out
	}
	var out []Held
	for _, h := range v.Domain.needed(ca, now) {
		if h.Package != v.Package {
			out = append(out, h)
		}
	}
	if v.elsewhere == nil {
		v.elsewhere = map[*x509.Certificate][]Held{}
	}
	v.elsewhere[ca] = out
	return out
}

// Current returns the domain's current CAs that the bundle's own sources
// (own) do not hold, in the domain's order; none for a partial view.
func (v *DomainView) Current(own []*x509.Certificate) []Origin {
	if !v.Whole() {
		return nil
	}
	have := pki.NewSet(own...)
	var out []Origin
	for _, o := range v.Domain.current {
		if !have.Has(o.Cert) {
			out = append(out, o)
		}
	}
	return out
}
