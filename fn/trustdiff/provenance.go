package trustdiff

import (
	"bytes"
	"crypto/x509"
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Provenance: why a trust object holds each CA, and, for a CA no rule
// explains, what else holds it and since when. Only what held a CA at
// BASE explains it at HEAD: a CA pasted into a caBundle together with a
// Secret that holds it, in any namespace, or into two trust objects at
// once, does not explain itself.
//
// One place is the CA itself rather than trust in it: the ca.crt of a
// CA's own key pair - a Secret of type kubernetes.io/tls whose ca.crt and
// tls.crt are the same one self-signed CA, its key in tls.key, as
// cert-manager writes the Secret of a self-signed Certificate (isCA: true,
// a selfSigned issuer) - is the CA's source, as its tls.crt is. A new CA
// there is the key pair renewed, not trust planted, when the place was
// such a key pair at BASE too (ownKeyPair on both sides): a renewal
// replaces the key pair where it was. A Secret that becomes one in the
// change (added, or an Opaque or leaf Secret at BASE) explains nothing,
// its own ca.crt included, and in no case does the key pair explain the
// CA anywhere else (holdersOf: only BASE explains). diff cannot tell
// cert-manager's renewal from a key pair replaced by hand; both show as
// the trust change of that ca.crt, with its readers and the breaks it
// makes - as the same Secret without ca.crt, whose tls.crt is a source
// and no trust object, always did.

// history is what BASE held, by place (a trust object's key, a holder's
// object and value): the CAs each place held, and the places that held a
// certificate at all.
type history struct {
	held   map[string]bool // place, NUL, SHA-256 of a CA
	places map[string]bool
	// keyPairs are the trust objects that were a CA's own key pair.
	keyPairs map[string]bool
}

// newHistory indexes what base held.
func newHistory(base *Model) *history {
	h := &history{held: map[string]bool{}, places: map[string]bool{}, keyPairs: map[string]bool{}}
	for _, o := range base.Trust {
		h.places[o.key()] = true
		h.keyPairs[o.key()] = o.keyPair
		for s := range shas(o) {
			h.held[o.key()+"\x00"+s] = true
		}
	}
	for s, hs := range base.holders {
		for _, x := range hs {
			h.places[x.at()], h.held[x.at()+"\x00"+s] = true, true
		}
	}
	for _, c := range base.certs {
		h.places[c.at()] = true
	}
	return h
}

// at is the identity of the place a holder holds a CA across the two
// trees.
func (h holder) at() string { return h.resource.id() + "\x00" + valueField(h.resource, h.key) }

// explain says why trust object o of tree t holds CA c; before says the
// object held it on the other side too (a CA kept or removed). prior is
// what BASE held when t is HEAD; nil when t is BASE, where a removed CA's
// why is the one it had: every holder there held it at BASE.
func explain(t *Model, o *TrustObject, c *x509.Certificate, before bool, prior *history) CA {
	s := sha(c)
	ca := CA{Subject: pki.Subject(c), SHA256: s, NotAfter: c.NotAfter.UTC(), Why: WhyUnexplained}
	if r, ok := o.reasons[s]; ok && (r.why != WhyCarried || before) {
		ca.Why, ca.Source = r.why, r.source
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
	case o.keyPair && prior != nil && prior.keyPairs[o.key()]:
		ca.Why, ca.Source = WhySource, "the CA's own key pair, renewed in place ("+o.Resource.String()+" tls.crt: the same self-signed CA, with its key)"
	default:
		ca.Provenance = hd.words()
	}
	return ca
}

// ownKeyPair reports whether value field of node is the ca.crt of a CA's
// own key pair: a Secret of type kubernetes.io/tls whose ca.crt and
// tls.crt are each the same one self-signed CA certificate, with a
// tls.key.
func ownKeyPair(node *yaml.RNode, field string) bool {
	if node.GetKind() != "Secret" || dataKey(field) != "ca.crt" || kube.ScalarAt(node, "type") != "kubernetes.io/tls" {
		return false
	}
	values, err := kube.Values(node)
	if err != nil {
		return false
	}
	one := map[string]*x509.Certificate{}
	for _, v := range values {
		if v.Key != "ca.crt" && v.Key != "tls.crt" && v.Key != "tls.key" {
			continue
		}
		one[v.Key] = nil
		if v.Key == "tls.key" {
			continue
		}
		if d, err := pki.DecodePEM(v.Bytes); err == nil && len(d.Certificates) == 1 {
			one[v.Key] = d.Certificates[0]
		}
	}
	ca, crt := one["ca.crt"], one["tls.crt"]
	_, key := one["tls.key"]
	return key && ca != nil && crt != nil && bytes.Equal(ca.Raw, crt.Raw) && pki.IsCA(ca) && pki.SelfSigned(ca)
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
func holdersOf(t *Model, o *TrustObject, s string, prior *history, trust bool) holding {
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
	for _, x := range t.holders[s] {
		add(x.at(), x.resource.String()+" "+x.key)
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
func (t *Model) trustHolding(s string) []*TrustObject {
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
