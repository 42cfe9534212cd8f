package bundle

import (
	"crypto/x509"
	"encoding/binary"
	"slices"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// LeafIndex holds the leaves of one run, indexed by issuer name, and
// remembers which of them each CA signed. A bundle fanned out to many
// namespaces merges once per target over the same leaves; looking the
// leaves up here once per CA, instead of once per target, keeps a render
// linear in targets plus leaves rather than their product.
//
// Answers are remembered per certificate pointer: the certificates of a
// run are parsed once (pki.Cache), so equal certificates share a pointer;
// two pointers to equal certificates are merely looked up twice. The verify
// functions passed in must agree with Verifies (NewVerifier does). A nil
// *LeafIndex holds no leaves. A LeafIndex is not safe for concurrent use.
type LeafIndex struct {
	leaves   []Leaf
	byIssuer map[string][]int // issuer RawSubject -> positions in leaves
	signed   map[*x509.Certificate][]int
	deps     map[depsKey][]Leaf
	ids      map[*x509.Certificate]uint32
}

// depsKey identifies one dependents computation: a CA, the current CAs
// (their ids, in order) and the time leaves must be valid at.
type depsKey struct {
	ca      *x509.Certificate
	current string
	now     int64
}

// NewLeafIndex indexes leaves; their order is kept in every answer.
func NewLeafIndex(leaves []Leaf) *LeafIndex {
	x := &LeafIndex{
		leaves:   leaves,
		byIssuer: map[string][]int{},
		signed:   map[*x509.Certificate][]int{},
		deps:     map[depsKey][]Leaf{},
		ids:      map[*x509.Certificate]uint32{},
	}
	for i, l := range leaves {
		x.byIssuer[string(l.Cert.RawIssuer)] = append(x.byIssuer[string(l.Cert.RawIssuer)], i)
	}
	return x
}

// Leaves returns the indexed leaves, in input order.
func (x *LeafIndex) Leaves() []Leaf {
	if x == nil {
		return nil
	}
	return x.leaves
}

// signedBy returns the positions of the leaves whose signature ca
// verifies, expired ones included, checking each candidate once per CA.
func (x *LeafIndex) signedBy(ca *x509.Certificate, verify func(ca, cert *x509.Certificate) bool) []int {
	if x == nil {
		return nil
	}
	if pos, ok := x.signed[ca]; ok {
		return pos
	}
	if verify == nil {
		verify = Verifies
	}
	var pos []int
	for _, i := range x.byIssuer[string(ca.RawSubject)] {
		if verify(ca, x.leaves[i].Cert) {
			pos = append(pos, i)
		}
	}
	x.signed[ca] = pos
	return pos
}

// SignedBy returns the leaves whose signature ca verifies (expired ones
// included), in input order. verify nil means Verifies.
func (x *LeafIndex) SignedBy(ca *x509.Certificate, verify func(ca, cert *x509.Certificate) bool) []Leaf {
	return x.at(x.signedBy(ca, verify))
}

// SignedByAny returns the leaves that at least one of cas verifies
// (expired ones included), each once, in input order. verify nil means
// Verifies.
func (x *LeafIndex) SignedByAny(cas []*x509.Certificate, verify func(ca, cert *x509.Certificate) bool) []Leaf {
	var pos []int
	for _, ca := range cas {
		pos = append(pos, x.signedBy(ca, verify)...)
	}
	slices.Sort(pos)
	return x.at(slices.Compact(pos))
}

func (x *LeafIndex) at(pos []int) []Leaf {
	if len(pos) == 0 {
		return nil
	}
	out := make([]Leaf, len(pos))
	for i, p := range pos {
		out[i] = x.leaves[p]
	}
	return out
}

// dependents returns the valid leaves that chain to ca but to none of the
// current CAs: the leaves that would stop verifying if ca left the bundle.
// A leaf that a current CA also verifies (a CA renewed with the same key)
// does not hold ca back. The answer is remembered for the same ca,
// current CAs and now, the repeated question of a fanned-out bundle; the
// returned slice is shared and must not be modified.
func (x *LeafIndex) dependents(ca *x509.Certificate, current []*x509.Certificate, now time.Time, verify func(ca, cert *x509.Certificate) bool) []Leaf {
	if x == nil {
		return nil
	}
	if verify == nil {
		verify = Verifies
	}
	k := depsKey{ca: ca, current: x.key(current), now: now.UnixNano()}
	if deps, ok := x.deps[k]; ok {
		return deps
	}
	var out []Leaf
	for _, i := range x.signedBy(ca, verify) {
		l := x.leaves[i]
		if pki.Expired(l.Cert, now) {
			continue
		}
		trustedByCurrent := false
		for _, c := range current {
			if verify(c, l.Cert) {
				trustedByCurrent = true
				break
			}
		}
		if !trustedByCurrent {
			out = append(out, l)
		}
	}
	x.deps[k] = out
	return out
}

// key names a list of certificates by the ids of their pointers.
func (x *LeafIndex) key(certs []*x509.Certificate) string {
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
