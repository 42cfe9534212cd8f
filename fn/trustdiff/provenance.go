package trustdiff

import (
	"crypto/x509"
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// Provenance: why a trust object holds each CA, and, for a CA no rule
// explains, what else holds it and since when. Only what held a CA at
// BASE explains it at HEAD: a CA pasted into a caBundle together with a
// Secret that holds it, in any namespace, or into two trust objects at
// once, does not explain itself.

// history is what BASE held, by place (a trust object's key, a holder's
// object and value): the CAs each place held, and the places that held a
// certificate at all.
type history struct {
	held   map[string]bool // place, NUL, SHA-256 of a CA
	places map[string]bool
}

// newHistory indexes what base held.
func newHistory(base *Tree) *history {
	h := &history{held: map[string]bool{}, places: map[string]bool{}}
	for _, o := range base.Trust {
		h.places[o.key()] = true
		for s := range shas(o) {
			h.held[o.key()+"\x00"+s] = true
		}
	}
	for s, hs := range base.Holders {
		for _, x := range hs {
			h.places[x.at()], h.held[x.at()+"\x00"+s] = true, true
		}
	}
	for _, c := range base.Certs {
		h.places[c.at()] = true
	}
	return h
}

// at is the identity of the place a holder holds a CA across the two
// trees.
func (h Holder) at() string { return h.Resource.id() + "\x00" + valueField(h.Resource, h.Key) }

// explain says why trust object o of tree t holds CA c; before says the
// object held it on the other side too (a CA kept or removed). prior is
// what BASE held when t is HEAD; nil when t is BASE, where a removed CA's
// why is the one it had: every holder there held it at BASE.
func explain(t *Tree, o *TrustObject, c *x509.Certificate, before bool, prior *history) CA {
	s := sha(c)
	ca := CA{Subject: pki.Subject(c), SHA256: s, NotAfter: c.NotAfter.UTC(), Why: WhyUnexplained}
	if r, ok := o.Reasons[s]; ok && (r.Why != WhyCarried || before) {
		ca.Why, ca.Source = r.Why, r.Source
		return ca
	}
	if where := issuedBeside(t, o, c); where != "" {
		ca.Why, ca.Source = WhySource, where
		return ca
	}
	// A kept CA is carried unless an object outside trust data held it
	// at BASE: another trust object is no source of what its own data
	// already held.
	hd := holdersOf(t, o, s, prior, !before)
	switch {
	case len(hd.old) > 0:
		ca.Why, ca.Source = WhySource, "held at BASE by "+listed(hd.old)
	case before:
		ca.Why = WhyCarried
	default:
		ca.Provenance = hd.words()
	}
	return ca
}

// holding is what holds a CA besides the trust object asked about: the
// places that held it at BASE and those that gained it in the change,
// each named.
type holding struct {
	old, fresh []string
	// replaced is true when the first fresh place held another
	// certificate at BASE: the change replaced its value.
	replaced bool
}

// holdersOf returns what of t holds CA s besides trust object o: the
// objects holding it outside trust data (a CA's own Secret, a snapshot)
// and, with trust, the other trust objects that hold it, the same
// object's other values included. With prior (t is HEAD), a place held it
// at BASE when prior says so.
func holdersOf(t *Tree, o *TrustObject, s string, prior *history, trust bool) holding {
	var hd holding
	add := func(place, name string) {
		if prior == nil || prior.held[place+"\x00"+s] {
			hd.old = append(hd.old, name)
			return
		}
		if len(hd.fresh) == 0 {
			hd.replaced = prior.places[place]
		}
		hd.fresh = append(hd.fresh, name)
	}
	for _, x := range t.Holders[s] {
		add(x.at(), x.Resource.String()+" "+x.Key)
	}
	if !trust {
		return hd
	}
	for _, other := range t.trustHolding(s) {
		if other != o && (prior != nil || other.Resource.id() != o.Resource.id()) && !other.derived[s] {
			add(other.key(), other.Resource.String()+" "+other.Field)
		}
	}
	return hd
}

// trustHolding returns the trust objects of t that hold CA s, from an
// index made once.
func (t *Tree) trustHolding(s string) []*TrustObject {
	if t.bySHA == nil {
		t.bySHA = map[string][]*TrustObject{}
		for _, x := range t.Trust {
			for sh := range shas(x) {
				t.bySHA[sh] = append(t.bySHA[sh], x)
			}
		}
	}
	return t.bySHA[s]
}

// words says what gained a CA in the same change, "" when nothing did.
func (hd holding) words() string {
	switch {
	case len(hd.fresh) > 0 && hd.replaced:
		return "introduced with " + listed(hd.fresh) + ", whose value this change replaces"
	case len(hd.fresh) > 0:
		return "introduced with " + listed(hd.fresh) + ", also new in this change"
	}
	return ""
}

// listed names the first of names and counts the rest.
func listed(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return fmt.Sprintf("%s and %d more", names[0], len(names)-1)
}

// plantedReason words why an added CA nothing explains is planted.
func plantedReason(c CA) string {
	if c.Provenance == "" {
		return "in data at HEAD, and no source holds it and no rule put it there"
	}
	return "in data at HEAD, " + c.Provenance + ": what gains a CA in the same change does not explain it"
}
