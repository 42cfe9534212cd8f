package anchors

import (
	"crypto/x509"
	"encoding/binary"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Held is a certificate found somewhere in the input, with an opaque
// description of where (for messages) and the caller's own identity for
// that place.
type Held struct {
	Cert  *x509.Certificate
	Where string
	// ID identifies the place for the caller (the position in its
	// inventory); the package only copies it.
	ID int
	// Supplied marks a CA certificate that is not the first certificate
	// of a value holding several (the chain a tls.crt or cert-chain.pem
	// carries after its own certificate): it links the certificates it
	// signed to their roots, but is not listed on its own, since it is
	// re-issued with the certificate it follows.
	Supplied bool
	// Package is the package the certificate is in when it was found in
	// another package of a trust domain (Domain); empty for the input's
	// own.
	Package string
}

// maxChainDepth bounds how many intermediates a chain may pass through:
// real chains have one or two, and the bound keeps a hostile input of
// certificates that sign each other in a loop cheap.
const maxChainDepth = 8

// ChainIndex holds the certificates of one run and answers which of them
// chain to a CA: a certificate chains to CA X when X signed it, directly
// or through intermediates found in the input - CA certificates that are
// not self-signed, valid at the time asked. Verification is by signature,
// not by name.
//
// A bundle fanned out to many namespaces asks the same questions once per
// target over the same certificates; the index remembers the answers per
// certificate pointer (the certificates of a run are parsed once,
// pki.Cache, so equal certificates share a pointer; two pointers to equal
// certificates are merely looked up twice), which keeps a render linear
// in targets plus certificates rather than their product. A nil
// *ChainIndex holds nothing. A ChainIndex is not safe for concurrent use.
type ChainIndex struct {
	held   []Held
	verify func(ca, cert *x509.Certificate) bool
	// byIssuer maps an issuer name (RawIssuer) to the positions of the
	// certificates that name it; bySubject the subject of each CA
	// certificate to its positions.
	byIssuer, bySubject map[string][]int
	children            map[*x509.Certificate][]int
	selfSigned          map[*x509.Certificate]bool
	reach               map[reachKey]bool
	deps                map[depsKey][]Held
	broken              map[brokenKey][]Broken
	ids                 map[*x509.Certificate]uint32
	// intermediates are the positions of the CA certificates that are not
	// self-issued.
	intermediates []int
}

// reachKey identifies one "does cert chain to one of these roots" answer.
type reachKey struct {
	cert  *x509.Certificate
	roots string
	now   int64
}

// depsKey identifies one dependents computation: a CA, the current CAs
// and every CA of the bundle (ids, in order) and the time.
type depsKey struct {
	ca      *x509.Certificate
	current string
	bundle  string
	now     int64
}

// NewChainIndex indexes held; their order is kept in every answer. verify
// reports whether ca signed cert (nil means verifies); callers that share
// one across a run pass a memoizing one (NewVerifier).
func NewChainIndex(held []Held, verify func(ca, cert *x509.Certificate) bool) *ChainIndex {
	if verify == nil {
		verify = verifies
	}
	x := &ChainIndex{
		held: held, verify: verify,
		byIssuer: map[string][]int{}, bySubject: map[string][]int{},
		children: map[*x509.Certificate][]int{}, selfSigned: map[*x509.Certificate]bool{},
		reach: map[reachKey]bool{}, deps: map[depsKey][]Held{}, broken: map[brokenKey][]Broken{}, ids: map[*x509.Certificate]uint32{},
	}
	for i, h := range held {
		c := h.Cert
		x.byIssuer[string(c.RawIssuer)] = append(x.byIssuer[string(c.RawIssuer)], i)
		if pki.IsCA(c) {
			x.bySubject[string(c.RawSubject)] = append(x.bySubject[string(c.RawSubject)], i)
			if string(c.RawIssuer) != string(c.RawSubject) {
				x.intermediates = append(x.intermediates, i)
			}
		}
	}
	return x
}

// signs reports whether ca signed c. A certificate whose authority key
// identifier names another key than ca's subject key identifier is not
// checked at all: two generations of an anchor often share a subject (a
// mesh's root.linkerd.cluster.local), and the identifiers tell their
// certificates apart without a signature check each.
func (x *ChainIndex) signs(ca, c *x509.Certificate) bool {
	if len(ca.SubjectKeyId) > 0 && len(c.AuthorityKeyId) > 0 && string(ca.SubjectKeyId) != string(c.AuthorityKeyId) {
		return false
	}
	return x.verify(ca, c)
}

// isRoot reports whether c is self-signed: a trust anchor, which nothing
// re-issues and which chains to nothing but itself.
func (x *ChainIndex) isRoot(c *x509.Certificate) bool {
	if string(c.RawIssuer) != string(c.RawSubject) {
		return false
	}
	ok, seen := x.selfSigned[c]
	if !seen {
		ok = x.verify(c, c)
		x.selfSigned[c] = ok
	}
	return ok
}

// signedBy returns the positions of the certificates whose signature ca
// verifies (ca itself and expired ones included).
func (x *ChainIndex) signedBy(ca *x509.Certificate) []int {
	if pos, ok := x.children[ca]; ok {
		return pos
	}
	var pos []int
	for _, i := range x.byIssuer[string(ca.RawSubject)] {
		if x.signs(ca, x.held[i].Cert) {
			pos = append(pos, i)
		}
	}
	x.children[ca] = pos
	return pos
}

// SignedByAny returns the certificates that chain to at least one of cas
// (expired ones included, through intermediates valid at now), each place
// once, in input order; self-signed certificates and cas themselves are
// not listed.
func (x *ChainIndex) SignedByAny(cas []*x509.Certificate, now time.Time) []Held {
	if x == nil {
		return nil
	}
	roots := pki.NewSet(cas...)
	seen := make([]bool, len(x.held))
	x.descend(cas, now, func(i int) bool {
		if !roots.Has(x.held[i].Cert) {
			seen[i] = true
		}
		return true
	})
	var out []Held
	for i, ok := range seen {
		if ok {
			out = append(out, x.held[i])
		}
	}
	return out
}

// descend walks down from cas: every certificate one of them signed, then
// every certificate those signed when they are CAs that are not
// self-signed and valid at now, each visited once. visit is called with
// each certificate's position; returning false stops the descent below
// it.
func (x *ChainIndex) descend(cas []*x509.Certificate, now time.Time, visit func(i int) bool) {
	type step struct {
		ca    *x509.Certificate
		depth int
	}
	queue := make([]step, 0, len(cas))
	for _, ca := range cas {
		queue = append(queue, step{ca, 0})
	}
	visited := pki.NewSet(cas...)
	seenPos := map[int]bool{}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, i := range x.signedBy(s.ca) {
			c := x.held[i].Cert
			if seenPos[i] || x.isRoot(c) {
				continue
			}
			seenPos[i] = true
			if !visit(i) || !pki.IsCA(c) || pki.Expired(c, now) || s.depth+1 >= maxChainDepth || !visited.Add(c) {
				continue
			}
			queue = append(queue, step{c, s.depth + 1})
		}
	}
}

// chainsToAny reports whether c chains to one of roots at now: one of
// them signed it, or an intermediate of the input that is valid at now
// and chains to one of them did. Roots are told apart by SHA-256.
func (x *ChainIndex) chainsToAny(c *x509.Certificate, roots *rootSet, now time.Time) bool {
	return x.reaches(c, roots, now, 0, nil)
}

func (x *ChainIndex) reaches(c *x509.Certificate, roots *rootSet, now time.Time, depth int, path []*x509.Certificate) bool {
	k := reachKey{cert: c, roots: roots.key, now: now.UnixNano()}
	if ok, found := x.reach[k]; found {
		return ok
	}
	ok := false
	for _, r := range roots.bySubject[string(c.RawIssuer)] {
		if x.signs(r, c) {
			ok = true
			break
		}
	}
	if !ok && depth+1 < maxChainDepth {
		path = append(path, c)
		for _, i := range x.bySubject[string(c.RawIssuer)] {
			p := x.held[i].Cert
			if x.isRoot(p) || pki.Expired(p, now) || onPath(path, p) || !x.signs(p, c) {
				continue
			}
			if x.reaches(p, roots, now, depth+1, path) {
				ok = true
				break
			}
		}
	}
	// Below the top, a "no" may have been cut short by the path it came
	// along (a loop); only a "yes", or the complete answer of the top, is
	// remembered.
	if ok || depth == 0 {
		x.reach[k] = ok
	}
	return ok
}

func onPath(path []*x509.Certificate, c *x509.Certificate) bool {
	fp := pki.FingerprintOf(c)
	for _, p := range path {
		if p == c || pki.FingerprintOf(p) == fp {
			return true
		}
	}
	return false
}

// rootSet is a set of CAs a question is asked against: by subject for the
// signature lookups, by SHA-256 for membership, and a key naming the set
// for the memos.
type rootSet struct {
	certs     *pki.Set
	bySubject map[string][]*x509.Certificate
	key       string
}

func (x *ChainIndex) rootSet(certs []*x509.Certificate) *rootSet {
	s := &rootSet{certs: pki.NewSet(), bySubject: map[string][]*x509.Certificate{}, key: x.key(certs)}
	for _, c := range certs {
		if s.certs.Add(c) {
			s.bySubject[string(c.RawSubject)] = append(s.bySubject[string(c.RawSubject)], c)
		}
	}
	return s
}

// dependents returns the valid certificates that chain to ca and to none of
// current: the certificates that stop verifying when ca leaves the
// bundle. Self-signed certificates, the bundle's own CAs (all, current and
// previous) and supplied chain copies are never dependents; a certificate
// that a current CA also verifies (a CA renewed with the same key) does
// not hold ca back. The answer is remembered for the same ca, CAs and now,
// the repeated question of a fanned-out bundle; the returned slice is
// shared and must not be modified.
func (x *ChainIndex) dependents(ca *x509.Certificate, current *rootSet, all *pki.Set, allKey string, now time.Time) []Held {
	if x == nil {
		return nil
	}
	k := depsKey{ca: ca, current: current.key, bundle: allKey, now: now.UnixNano()}
	if deps, ok := x.deps[k]; ok {
		return deps
	}
	var out []Held
	x.descend([]*x509.Certificate{ca}, now, func(i int) bool {
		h := x.held[i]
		switch {
		case all.Has(h.Cert):
			return false // a CA of the bundle: what it signed chains to it, not through it
		case pki.Expired(h.Cert, now):
			return false
		case !h.Supplied && !x.chainsToAny(h.Cert, current, now):
			out = append(out, h)
		}
		return true
	})
	x.deps[k] = out
	return out
}

// key names a list of certificates by the ids of their pointers.
func (x *ChainIndex) key(certs []*x509.Certificate) string {
	b := make([]byte, 0, 4*len(certs))
	for _, c := range certs {
		id, ok := x.ids[c]
		if !ok {
			id = uint32(len(x.ids))
			x.ids[c] = id
		}
		b = binary.LittleEndian.AppendUint32(b, id)
	}
	return string(b)
}

// issuerOf returns a CA certificate of the input that signed c, nil when
// the input holds none.
func (x *ChainIndex) issuerOf(c *x509.Certificate) *x509.Certificate {
	for _, i := range x.bySubject[string(c.RawIssuer)] {
		if p := x.held[i].Cert; x.signs(p, c) {
			return p
		}
	}
	return nil
}
