package trustdiff

import (
	"crypto/x509"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Reasons of breaks, in words.
const (
	reasonLost    = "verified against this trust at BASE and does not at HEAD"
	reasonNewCert = "issued by the new CA, and these consumers read the trust once and are not rolled: they keep the old trust"
	reasonOldCert = "issued by the old CA and still presented (its holder is read once and not rolled), and these consumers see the new trust"
)

// breaker finds the breaks of one change.
type breaker struct {
	base, head *side
	v          *verifier
	keys       []string
	b, h       map[string]*TrustObject
	baseAt     map[string]cert
	headHas    map[string]bool
	chains     map[string][]string // chainable's lists, by issuers
	groups     map[string][]keyGroup
	index      map[string]int // position of each key in keys
	repl       map[string][2]*TrustObject
	rolled     map[string]bool
	seen       map[string]int  // break id: its index in out
	placed     map[string]bool // break id and place of a certificate named
	out        []Break
}

// breaks lists the certificates the change breaks: those that verified
// against a trust object with readers at base and do not at head, and,
// for a trust object whose CAs were replaced, the old and new CAs'
// certificates against the trust each reader keeps.
func breaks(base, head *Model, now time.Time) []Break {
	k := newBreaker(base, head, now)
	for _, c := range head.certs {
		for _, t := range k.todo(k.grouped(k.issued(c)...), func(g keyGroup) (bool, bool) {
			return k.mayLose(c, g), k.mayBreakNew(c, g)
		}) {
			if t.first {
				k.lost(c, t.key)
			}
			if t.second {
				k.newAgainstOld(c, t.key)
			}
		}
	}
	for _, c := range base.certs {
		for _, t := range k.todo(k.grouped(c.cert), func(g keyGroup) (bool, bool) { return k.mayBreakOld(c, g), false }) {
			k.oldAgainstNew(c, t.key)
		}
	}
	return k.out
}

// issued returns c's certificate and, when its place held another at the
// same position at BASE (slot), that one: the certificates whose trust
// objects the rules judge for c.
func (k *breaker) issued(c cert) []*x509.Certificate {
	out := []*x509.Certificate{c.cert}
	if prev, ok := k.baseAt[c.slot()]; ok {
		out = append(out, prev.cert)
	}
	return out
}

// newBreaker returns the breaker of changing base into head at now.
func newBreaker(base, head *Model, now time.Time) *breaker {
	k := &breaker{base: newSide(base), head: newSide(head), seen: map[string]int{}, placed: map[string]bool{}, baseAt: map[string]cert{}, rolled: rolled(base, head),
		v: &verifier{now: now, pools: map[string]*x509.CertPool{}, seen: map[verifyKey]*x509.Certificate{}, sigs: map[*TrustObject]string{}, shas: map[*x509.Certificate]string{}}, repl: map[string][2]*TrustObject{}, headHas: map[string]bool{}}
	k.keys, k.b, k.h = pairs(base, head)
	for _, c := range base.certs {
		k.baseAt[c.slot()] = c
	}
	for _, c := range head.certs {
		k.headHas[c.at()+"\x00"+sha(c.cert)] = true
	}
	return k
}

// keyClass is what the break rules read of a trust object's two sides,
// its place aside: the CAs of each side, whether it has readers, whether
// the change replaced its CAs and whom that leaves on the old or the new
// trust. A fleet holds a copy of each trust object per cluster, all of
// one class: a certificate is judged once per class, not once per
// cluster, and the rules run object by object only where a class may
// break - the diff stays linear in clusters.
type keyClass struct {
	bsig, hsig      string
	bNil, hNil      bool
	read            bool
	replaced        bool
	keepOld, seeNew bool
}

// keyGroup is the candidate keys of one class, in k.keys' order.
type keyGroup struct {
	keyClass
	rep  string
	keys []string
}

// job is a key the rules run on for one certificate, with which of its
// two rules may break.
type job struct {
	at            int
	key           string
	first, second bool
}

// todo returns the keys of groups whose class may break, in k.keys'
// order (the order the rules ran in key by key), with what may.
func (k *breaker) todo(groups []keyGroup, may func(keyGroup) (bool, bool)) []job {
	var out []job
	for _, g := range groups {
		first, second := may(g)
		if !first && !second {
			continue
		}
		for _, key := range g.keys {
			out = append(out, job{at: k.index[key], key: key, first: first, second: second})
		}
	}
	slices.SortFunc(out, func(a, b job) int { return a.at - b.at })
	return out
}

// class returns the class of a trust object key.
func (k *breaker) class(key string) keyClass {
	bo, ho := k.b[key], k.h[key]
	c := keyClass{bNil: bo == nil, hNil: ho == nil}
	if bo != nil {
		c.bsig, c.read = k.v.sig(bo), len(bo.Readers) > 0
	}
	if ho != nil {
		c.hsig, c.read = k.v.sig(ho), c.read || len(ho.Readers) > 0
	}
	if _, rh := k.replaced(key); rh != nil {
		keep, fresh := k.keepers(rh.Readers)
		c.replaced, c.keepOld, c.seeNew = true, len(keep) > 0, len(fresh) > 0
	}
	return c
}

// grouped returns chainable's keys for certificates cs, grouped by class,
// once per issuers.
func (k *breaker) grouped(cs ...*x509.Certificate) []keyGroup {
	id := issuersID(cs)
	if gs, ok := k.groups[id]; ok {
		return gs
	}
	var out []keyGroup
	at := map[keyClass]int{}
	for _, key := range k.chainable(cs...) {
		c := k.class(key)
		i, ok := at[c]
		if !ok {
			i, at[c] = len(out), len(out)
			out = append(out, keyGroup{keyClass: c, rep: key})
		}
		out[i].keys = append(out[i].keys, key)
	}
	if k.groups == nil {
		k.groups = map[string][]keyGroup{}
	}
	k.groups[id] = out
	return out
}

// mayLose reports whether lost may find a break for c against a key of
// g: what lost checks of the class. Whether the certificate c's place
// held at BASE counts depends on the place; lost decides that per key.
func (k *breaker) mayLose(c cert, g keyGroup) bool {
	if g.bNil || !g.read {
		return false
	}
	bo, ho := k.b[g.rep], k.h[g.rep]
	if k.v.anchor(c.cert, bo, k.base) == nil {
		prev, ok := k.baseAt[c.slot()]
		if !ok || k.v.anchor(prev.cert, bo, k.base) == nil {
			return false
		}
	}
	return k.v.anchor(c.cert, ho, k.head) == nil
}

// mayBreakNew is newAgainstOld's check of the class.
func (k *breaker) mayBreakNew(c cert, g keyGroup) bool {
	if !g.replaced || !g.keepOld {
		return false
	}
	bo, ho := k.b[g.rep], k.h[g.rep]
	return k.v.anchor(c.cert, ho, k.head) != nil && k.v.anchor(c.cert, bo, k.head) == nil
}

// mayBreakOld is oldAgainstNew's check of the class.
func (k *breaker) mayBreakOld(c cert, g keyGroup) bool {
	if !g.replaced || !g.seeNew {
		return false
	}
	bo, ho := k.b[g.rep], k.h[g.rep]
	return k.v.anchor(c.cert, bo, k.base) != nil && k.v.anchor(c.cert, ho, k.base) == nil
}

// issuersID identifies the issuers of cs.
func issuersID(cs []*x509.Certificate) string {
	var id strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&id, "%d:%s", len(c.RawIssuer), c.RawIssuer)
	}
	return id.String()
}

// chainable returns the keys of the trust objects that certificates cs
// may chain to (candidates), in the order of k.keys. They depend on the
// certificates' issuers only: a fleet holds a copy of each certificate
// per cluster, and the list is made once per issuers.
func (k *breaker) chainable(cs ...*x509.Certificate) []string {
	id := issuersID(cs)
	if keys, ok := k.chains[id]; ok {
		return keys
	}
	cand := map[string]bool{}
	for _, c := range cs {
		maps.Copy(cand, candidates(c, k.base, k.head))
	}
	if k.chains == nil {
		k.chains = map[string][]string{}
	}
	keys := k.ordered(cand)
	k.chains[id] = keys
	return keys
}

// ordered returns the keys of cand in the order of k.keys: each
// certificate looks only at the trust objects it may chain to.
func (k *breaker) ordered(cand map[string]bool) []string {
	if k.index == nil {
		k.index = make(map[string]int, len(k.keys))
		for i, key := range k.keys {
			k.index[key] = i
		}
	}
	// Sorted as positions: a fleet gives each certificate a candidate per
	// cluster, and a comparison that looks both keys up is the cost.
	at := make([]int, 0, len(cand))
	for key := range cand {
		at = append(at, k.index[key])
	}
	slices.Sort(at)
	out := make([]string, len(at))
	for i, n := range at {
		out[i] = k.keys[n]
	}
	return out
}

// add records a break once: the same certificate held in several places
// (a copy per cluster) breaks a trust object once, named at the place
// nearest it, the others listed (AlsoAt). what gives the readers that
// reject it and the CA it needs, asked only for a new break: a fleet's
// copies of one certificate meet every cluster's copy of the trust object,
// and naming the CA looks through every trust object of the tree.
func (k *breaker) add(c cert, o *TrustObject, reason string, what func() ([]Reader, CARef)) {
	id := sha(c.cert) + "\x00" + o.key() + "\x00" + reason
	if k.placed[id+"\x00"+c.at()] {
		return
	}
	ref := certRef(c)
	if i, ok := k.seen[id]; ok { // a fleet holds one copy per cluster: a set, not a search
		k.placed[id+"\x00"+c.at()] = true
		b := &k.out[i]
		if nearness(c.resource.File, c.pkgDir, o) > nearness(b.Certificate.Resource.File, b.Certificate.Package, o) {
			b.Certificate, ref = ref, b.Certificate
			b.Domain = k.sharedDomain(c.pkgDir, o)
		}
		b.AlsoAt = append(b.AlsoAt, ref)
		return
	}
	readers, needs := what()
	if len(readers) == 0 {
		return
	}
	k.placed[id+"\x00"+c.at()] = true
	k.seen[id] = len(k.out)
	k.out = append(k.out, Break{Certificate: ref, Needs: needs, Trust: TrustRef{Resource: o.Resource, Field: o.Field, Package: o.Package},
		Readers: readers, Reason: reason, Domain: k.sharedDomain(c.pkgDir, o)})
}

// nearness ranks a certificate's place (file, package) by how near trust
// object o it is: in o's directory, in o's package, elsewhere.
func nearness(file, pkg string, o *TrustObject) int {
	switch {
	case path.Dir(file) == path.Dir(o.Resource.File):
		return 2
	case pkg == o.Package:
		return 1
	}
	return 0
}

// sharedDomain returns the trust domain of o's bundle when a certificate
// of package pkg, another package, belongs to it too (a bundle of pkg
// names it on either side); "" otherwise.
func (k *breaker) sharedDomain(pkg string, o *TrustObject) string {
	if o.domain == "" || pkg == o.Package {
		return ""
	}
	for _, s := range []*side{k.head, k.base} {
		if s.model.domains[pkg][o.domain] {
			return o.domain
		}
	}
	return ""
}

// lost: c, or the certificate its place held at base, verified against
// the trust object at base, and c does not verify against it at head.
func (k *breaker) lost(c cert, key string) {
	bo, ho := k.b[key], k.h[key]
	if bo == nil {
		return
	}
	if len(bo.Readers) == 0 && (ho == nil || len(ho.Readers) == 0) {
		return // no reader on either side: nothing breaks
	}
	a := k.v.anchor(c.cert, bo, k.base)
	before := a != nil
	// The certificate its place held at BASE, at the same position (the
	// leaf a re-issued leaf replaced, not the issuer after it in the
	// chain: a valid issuer does not make an expired leaf one that
	// verified), counts for the trust objects of its own directory and of
	// its trust domain: a re-issued issuer
	// against its mesh's roots - each cluster's of the domain - not a
	// re-issued leaf against an unrelated bundle that happens to hold its
	// old CA.
	if prev, ok := k.baseAt[c.slot()]; !before && ok && (path.Dir(bo.Resource.File) == path.Dir(c.resource.File) || k.sharedDomain(c.pkgDir, bo) != "") {
		before = k.v.anchor(prev.cert, bo, k.base) != nil
	}
	if !before || k.v.anchor(c.cert, ho, k.head) != nil {
		return
	}
	o := ho
	if o == nil {
		o = bo
	}
	k.add(c, o, reasonLost, func() ([]Reader, CARef) {
		if a != nil {
			return unionReaders(bo.Readers, ho), CARef{Subject: pki.Subject(a), SHA256: sha(a)}
		}
		return unionReaders(bo.Readers, ho), needs(c.cert, k.v, ho, k.head, k.base)
	})
}

// replaced returns the two sides of a trust object whose CAs the change
// replaced (some added, some removed), nil when it did not.
func (k *breaker) replaced(key string) (bo, ho *TrustObject) {
	r, ok := k.repl[key]
	if !ok {
		r[0], r[1] = k.replace(key)
		k.repl[key] = r
	}
	return r[0], r[1]
}

// replace is replaced, computed.
func (k *breaker) replace(key string) (bo, ho *TrustObject) {
	bo, ho = k.b[key], k.h[key]
	if bo == nil || ho == nil {
		return nil, nil
	}
	bs, hs := shas(bo), shas(ho)
	added, removed := false, false
	for s := range hs {
		added = added || !bs[s]
	}
	for s := range bs {
		removed = removed || !hs[s]
	}
	if !added || !removed {
		return nil, nil
	}
	return bo, ho
}

// keepers splits the readers of a trust object into those that keep the
// old trust after the change (they read it once and are not rolled by
// it) and those that see the new one.
func (k *breaker) keepers(cs []Reader) (keep, fresh []Reader) {
	for _, c := range cs {
		if c.Once && (c.Never || !k.rolled[c.Resource.id()]) {
			keep = append(keep, c)
		} else {
			fresh = append(fresh, c)
		}
	}
	return keep, fresh
}

// newAgainstOld: c verifies against the new trust and not against the old
// one, which some readers keep.
func (k *breaker) newAgainstOld(c cert, key string) {
	bo, ho := k.replaced(key)
	if bo == nil {
		return
	}
	keep, _ := k.keepers(ho.Readers)
	a := k.v.anchor(c.cert, ho, k.head)
	if len(keep) == 0 || a == nil || k.v.anchor(c.cert, bo, k.head) != nil {
		return
	}
	k.add(c, ho, reasonNewCert, func() ([]Reader, CARef) { return keep, CARef{Subject: pki.Subject(a), SHA256: sha(a)} })
}

// oldAgainstNew: base certificate c verified against the old trust, is no
// longer at its place at head but is still presented (its holder is read
// once by a workload the change does not roll), and does not verify
// against the new trust that readers which reload see.
func (k *breaker) oldAgainstNew(c cert, key string) {
	bo, ho := k.replaced(key)
	if bo == nil || !k.stillPresented(c) {
		return
	}
	_, fresh := k.keepers(ho.Readers)
	a := k.v.anchor(c.cert, bo, k.base)
	if len(fresh) == 0 || a == nil || k.v.anchor(c.cert, ho, k.base) != nil {
		return
	}
	k.add(c, ho, reasonOldCert, func() ([]Reader, CARef) { return fresh, CARef{Subject: pki.Subject(a), SHA256: sha(a)} })
}

// stillPresented reports whether base certificate c left its place and a
// workload that read its holder once at BASE, and is not rolled, keeps it
// (the pods that run at the change started from BASE's templates).
func (k *breaker) stillPresented(c cert) bool {
	if k.headHas[c.at()+"\x00"+sha(c.cert)] {
		return false // still in the tree: lost covers it
	}
	keep, _ := k.keepers(k.base.model.presenters[c.resource.id()])
	return len(keep) > 0
}

// unionReaders returns a's readers and those of o (may be nil) that a
// does not name.
func unionReaders(a []Reader, o *TrustObject) []Reader {
	out := append([]Reader(nil), a...)
	if o == nil {
		return out
	}
	named := make(map[[2]string]bool, len(out))
	for _, x := range out {
		named[[2]string{x.Resource.id(), x.Via}] = true
	}
	for _, c := range o.Readers {
		if k := [2]string{c.Resource.id(), c.Via}; !named[k] {
			named[k] = true
			out = append(out, c)
		}
	}
	return out
}
