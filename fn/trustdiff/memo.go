package trustdiff

import (
	"crypto/sha256"
	"crypto/x509"

	"github.com/rotate-certs/rotate-certs/fn/clusterapi"
	"github.com/rotate-certs/rotate-certs/fn/handover"
	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Memo keeps what Build read of each object for the Build of the other
// side of a change: what it reads of one object - its certificates, the
// private keys in it, its pod template's digest - depends on the object
// alone, and the objects a change left alone are the same nodes on both
// sides (resio.Shared). A Memo serves one Build at a time: each Build
// takes what the Build before it read and keeps what it reads for the
// next. A nil *Memo keeps nothing.
type Memo struct {
	// reads are what each Build read of each object: the Build before's,
	// and this Build's, kept as it reads (of).
	reads handover.Map[*yaml.RNode, *read]
	// certs parses each certificate once for both Builds, so that one
	// certificate is one *x509.Certificate on both sides, and roots
	// remembers which are self-signed (a signature check each).
	certs *pki.Cache
	roots map[*x509.Certificate]bool
}

// read is what Build read of one object, each part once it is read.
type read struct {
	certs     []found
	problems  []inventory.Problem
	keys      []keyHit
	digest    string
	hasCerts  bool
	hasKeys   bool
	hasDigest bool
}

// keyHit is one private key found in an object: its field, and a digest
// of the key (the model never holds the key).
type keyHit struct {
	field  string
	digest [sha256.Size]byte
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo { return &Memo{certs: pki.NewCache(), roots: map[*x509.Certificate]bool{}} }

// parsed returns the certificate cache of a Build: the Memo's, or a new
// one with no Memo.
func (m *Memo) parsed() *pki.Cache {
	if m == nil {
		return pki.NewCache()
	}
	return m.certs
}

// selfSigned returns the roots a Build remembers which certificates are
// self-signed in: the Memo's, or a new map with no Memo.
func (m *Memo) selfSigned() map[*x509.Certificate]bool {
	if m == nil {
		return map[*x509.Certificate]bool{}
	}
	return m.roots
}

// of returns the record of item: the one this Build has already taken or
// made, else the Build before's, else a new one - kept for the next Build;
// with no Memo, a new one each time. A Build calls it on its own goroutine.
func (m *Memo) of(item *yaml.RNode) *read {
	if m == nil {
		return &read{}
	}
	if r, ok := m.reads.Kept(item); ok {
		return r
	}
	r, ok := m.reads.Before(item)
	if !ok {
		r = &read{}
	}
	m.reads.Keep(item, r)
	return r
}

// Only forgets what the Build before read of any object the Build to come
// does not hold (holds false): it could never take it (a pull request over
// a fleet rewrites a file in every cluster, and what was read of each
// rewritten object would be held through the next Build for nothing).
func (m *Memo) Only(holds func(item *yaml.RNode) bool) {
	if m == nil {
		return
	}
	m.reads.Only(func(item *yaml.RNode, _ *read) bool { return holds(item) })
}

// done ends a Build: what it read is what the next one is lent.
func (m *Memo) done() {
	if m != nil {
		m.reads.Done()
	}
}

// found is one certificate in one value of one resource, as `check`
// finds it (package inventory: the values of pod templates' env and Helm
// values included) - the one way the diff reads certificates.
type found = inventory.Found

// findCertificates returns every certificate of items (embedded ones
// too: inventory.ScanAll), by the target-kind table, and the values that
// hold certificate data that does not parse: each object's as the Build
// before read it, or read here. A Cluster API Machine's certificates
// depend on other objects (its bootstrap config): with one among items,
// they are all read together.
func (b *builder) findCertificates(items []*yaml.RNode) ([]found, []inventory.Problem) {
	for _, item := range items {
		if clusterapi.IsMachine(item) {
			inv := inventory.ScanAllWith(items, b.in.Memo.parsed(), b.in.Targets)
			return inv.Certificates, inv.Problems
		}
	}
	var certs []found
	var problems []inventory.Problem
	parsed := b.in.Memo.parsed()
	for _, item := range items {
		r := b.in.Memo.of(item)
		if !r.hasCerts {
			inv := inventory.ScanAllWith([]*yaml.RNode{item}, parsed, b.in.Targets)
			r.certs, r.problems, r.hasCerts = inv.Certificates, inv.Problems, true
		}
		certs, problems = append(certs, r.certs...), append(problems, r.problems...)
	}
	return certs, problems
}

// digestOf is digest of nodes, item's pod template or roll-out fields,
// as the Build before computed it for item, or computed here.
func (b *builder) digestOf(item *yaml.RNode, nodes ...*yaml.RNode) string {
	r := b.in.Memo.of(item)
	if !r.hasDigest {
		r.digest, r.hasDigest = digest(nodes...), true
	}
	return r.digest
}
