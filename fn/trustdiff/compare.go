package trustdiff

import (
	"crypto/x509"
	"slices"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// CA is a CA of a trust object in the result.
type CA struct {
	Subject  string    `json:"subject"`
	SHA256   string    `json:"sha256"`
	NotAfter time.Time `json:"notAfter"`
	// Why is source, carried, restored or unexplained.
	Why string `json:"why"`
	// Source says, for source, where the CA is current.
	Source string `json:"source,omitempty"`
}

// TrustChange is what a change does to one trust object.
type TrustChange struct {
	Resource Resource `json:"resource"`
	Field    string   `json:"field"`
	Bundle   string   `json:"bundle,omitempty"`
	// Package is the directory of the policy package that holds the
	// object, "" when none does: two clusters hold objects of the same
	// name.
	Package   string     `json:"package,omitempty"`
	Added     []CA       `json:"added"`
	Removed   []CA       `json:"removed"`
	Kept      []CA       `json:"kept"`
	Consumers []Consumer `json:"consumers"`
}

// Change is a change said in words: a roll-out, an alert rule, a policy.
type Change struct {
	Resource Resource `json:"resource"`
	Change   string   `json:"change"`
}

// Roll is a workload the change rolls.
type Roll struct {
	Resource Resource `json:"resource"`
	Wave     string   `json:"wave,omitempty"`
}

// Summary counts the result.
type Summary struct {
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Breaks  int `json:"breaks"`
	Planted int `json:"planted"`
	Rolls   int `json:"rolls"`
}

// Result is what a change does to trust.
type Result struct {
	SchemaVersion string        `json:"schemaVersion"`
	Now           time.Time     `json:"now"`
	Summary       Summary       `json:"summary"`
	Trust         []TrustChange `json:"trust"`
	Breaks        []Break       `json:"breaks"`
	Planted       []Planted     `json:"planted"`
	Rolls         []Roll        `json:"rolls"`
	Rollouts      []Change      `json:"rollouts"`
	Alerts        []Change      `json:"alerts"`
	Policies      []Change      `json:"policies"`
	// Incomplete are the files read on neither side that the change
	// leaves as they were (set by the caller that read the trees).
	Incomplete []Incomplete `json:"incomplete,omitempty"`
}

// Empty reports whether the change does nothing the diff reports.
func (r Result) Empty() bool {
	return len(r.Trust)+len(r.Breaks)+len(r.Planted)+len(r.Rolls)+len(r.Rollouts)+len(r.Alerts)+len(r.Policies) == 0
}

// Compare says what changing base into head does to trust, verified at
// now. It reads only its arguments.
func Compare(base, head *Tree, now time.Time) Result {
	r := Result{SchemaVersion: SchemaVersion, Now: now.UTC()}
	r.Trust = trustChanges(base, head)
	r.Breaks = breaks(base, head, now)
	r.Planted = append(plantedCAs(r.Trust), memoryChanges(base, head, now)...)
	r.Rolls = rolls(base, head)
	r.Rollouts = rollouts(base, head)
	r.Alerts = alertChanges(base, head)
	r.Policies = policyChanges(base, head)
	for _, t := range r.Trust {
		r.Summary.Added += len(t.Added)
		r.Summary.Removed += len(t.Removed)
	}
	r.Summary.Breaks, r.Summary.Planted, r.Summary.Rolls = len(r.Breaks), len(r.Planted), len(r.Rolls)
	return r
}

// trustIndex maps trust objects by key.
func trustIndex(t *Tree) map[string]*TrustObject {
	out := make(map[string]*TrustObject, len(t.Trust))
	for _, o := range t.Trust {
		out[o.key()] = o
	}
	return out
}

// pairs returns every trust object key of either tree, head's order first,
// with the object of each side (nil when absent).
func pairs(base, head *Tree) (keys []string, b, h map[string]*TrustObject) {
	b, h = trustIndex(base), trustIndex(head)
	for _, o := range head.Trust {
		keys = append(keys, o.key())
	}
	for _, o := range base.Trust {
		if h[o.key()] == nil {
			keys = append(keys, o.key())
		}
	}
	return slices.Compact(keys), b, h
}

// trustChanges lists, per trust object whose set of CAs changed, the CAs
// added, removed and kept.
func trustChanges(base, head *Tree) []TrustChange {
	keys, b, h := pairs(base, head)
	prior := map[string]bool{} // object key and CA held at BASE
	for _, o := range base.Trust {
		for sh := range shas(o) {
			prior[o.key()+"\x00"+sh] = true
		}
	}
	var out []TrustChange
	for _, k := range keys {
		bo, ho := b[k], h[k]
		bs, hs := shas(bo), shas(ho)
		tc := TrustChange{}
		if ho != nil {
			tc.Resource, tc.Field, tc.Bundle, tc.Package, tc.Consumers = ho.Resource, ho.Field, ho.Bundle, ho.Package, ho.Consumers
			for _, c := range uniqueCAs(ho) {
				ca := explain(head, ho, c, bs[sha(c)], prior)
				if bs[sha(c)] {
					tc.Kept = append(tc.Kept, ca)
				} else {
					tc.Added = append(tc.Added, ca)
				}
			}
		} else {
			tc.Resource, tc.Field, tc.Bundle, tc.Package, tc.Consumers = bo.Resource, bo.Field, bo.Bundle, bo.Package, bo.Consumers
		}
		if bo != nil {
			for _, c := range uniqueCAs(bo) {
				if !hs[sha(c)] {
					tc.Removed = append(tc.Removed, explain(base, bo, c, true, nil))
				}
			}
		}
		if len(tc.Added)+len(tc.Removed) > 0 {
			out = append(out, tc)
		}
	}
	return out
}

// shas returns the set of SHA-256 of o's CAs; empty for nil.
func shas(o *TrustObject) map[string]bool {
	out := map[string]bool{}
	if o != nil {
		for _, c := range o.CAs {
			out[sha(c)] = true
		}
	}
	return out
}

// uniqueCAs returns o's CAs without repeats, in data order.
func uniqueCAs(o *TrustObject) []*x509.Certificate {
	return pki.NewSet(o.CAs...).List()
}

// explain says why trust object o of tree t holds CA c; before says the
// object held it on the other side too (for a CA kept or removed). prior,
// when not nil, are the other trust objects (key and CA) that held a CA
// before the change: only those explain it, so that a CA pasted into two
// objects at once does not explain itself.
func explain(t *Tree, o *TrustObject, c *x509.Certificate, before bool, prior map[string]bool) CA {
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
	if before && len(t.Holders[s]) == 0 {
		ca.Why = WhyCarried // its own data held it; another trust object is no source
		return ca
	}
	if where := heldElsewhere(t, o, s, prior); where != "" {
		ca.Why, ca.Source = WhySource, where
	}
	return ca
}

// heldElsewhere names an object of t other than o that holds the CA sha:
// an object holding it outside trust data (the CA's own Secret, a
// snapshot), or another trust object that holds it (and, with prior, held
// it before the change); "" when none does.
func heldElsewhere(t *Tree, o *TrustObject, s string, prior map[string]bool) string {
	if hs := t.Holders[s]; len(hs) > 0 {
		return hs[0].Resource.String() + " " + hs[0].Key
	}
	if t.bySHA == nil {
		t.bySHA = map[string][]*TrustObject{}
		for _, x := range t.Trust {
			for sh := range shas(x) {
				t.bySHA[sh] = append(t.bySHA[sh], x)
			}
		}
	}
	for _, other := range t.bySHA[s] {
		if other != o && other.Resource.id() != o.Resource.id() && (prior == nil || prior[other.key()+"\x00"+s]) {
			return other.Resource.String() + " " + other.Field
		}
	}
	return ""
}

// issuedBeside names the certificate beside o in its own object that CA c
// signed (a Secret's ca.crt beside the tls.crt it issued, as cert-manager
// and Envoy Gateway's certgen write them); "" when none.
func issuedBeside(t *Tree, o *TrustObject, c *x509.Certificate) string {
	if t.byResource == nil {
		t.byResource = map[string][]Cert{}
		for _, x := range t.Certs {
			t.byResource[x.Resource.id()] = append(t.byResource[x.Resource.id()], x)
		}
	}
	for _, x := range t.byResource[o.Resource.id()] {
		if string(x.Cert.RawIssuer) == string(c.RawSubject) && x.Cert.CheckSignatureFrom(c) == nil {
			return "issued " + x.Resource.String() + " " + x.Key
		}
	}
	return ""
}

// plantedCAs are the CAs added to a trust object that nothing explains.
func plantedCAs(changes []TrustChange) []Planted {
	var out []Planted
	for _, t := range changes {
		for _, c := range t.Added {
			if c.Why == WhyUnexplained {
				out = append(out, Planted{Resource: t.Resource, Field: t.Field, Subject: c.Subject, SHA256: c.SHA256,
					Reason: "in data at HEAD, and no source holds it and no rule put it there"})
			}
		}
	}
	return out
}

// rolls lists the workloads whose pod template the change changes (they
// roll now), then those a roll-out in waves at HEAD rolls later that it did
// not at BASE, with their wave.
func rolls(base, head *Tree) []Roll {
	before := map[string]Workload{}
	for _, w := range base.Workloads {
		before[w.Resource.id()] = w
	}
	var now, later []Roll
	for _, w := range head.Workloads {
		b, ok := before[w.Resource.id()]
		switch {
		case ok && b.Template != w.Template:
			now = append(now, Roll{Resource: w.Resource})
		case w.Wave != "" && (!ok || b.Wave != w.Wave):
			later = append(later, Roll{Resource: w.Resource, Wave: w.Wave})
		}
	}
	return append(now, later...)
}

// rolled returns the ids of the workloads the change rolls now: whose
// template it changes, of a kind whose template change replaces its
// running pods (policy.WorkloadKind's ReplacesPods).
func rolled(base, head *Tree) map[string]bool {
	replaces := map[string]bool{}
	for _, w := range head.Workloads {
		replaces[w.Resource.id()] = w.replaces
	}
	out := map[string]bool{}
	for _, r := range rolls(base, head) {
		if r.Wave == "" && replaces[r.Resource.id()] {
			out[r.Resource.id()] = true
		}
	}
	return out
}

// rollouts lists the Cluster API objects whose machine templates change.
func rollouts(base, head *Tree) []Change {
	before := map[string]string{}
	for _, r := range base.Rollouts {
		before[r.Resource.id()] = r.Digest
	}
	var out []Change
	for _, r := range head.Rollouts {
		if d, ok := before[r.Resource.id()]; ok && d != r.Digest {
			out = append(out, Change{Resource: r.Resource, Change: "its machines roll out: the machine template or rollout fields changed"})
		}
	}
	return out
}

// alertChanges lists the alert rules added and removed.
func alertChanges(base, head *Tree) []Change {
	id := func(a Alert) string { return a.Resource.id() + "\x00" + a.Name }
	in := func(t *Tree) map[string]bool {
		m := map[string]bool{}
		for _, a := range t.Alerts {
			m[id(a)] = true
		}
		return m
	}
	b, h := in(base), in(head)
	var out []Change
	for _, a := range head.Alerts {
		if !b[id(a)] {
			out = append(out, Change{Resource: a.Resource, Change: "alert " + a.Name + " added"})
		}
	}
	for _, a := range base.Alerts {
		if !h[id(a)] {
			out = append(out, Change{Resource: a.Resource, Change: "alert " + a.Name + " removed"})
		}
	}
	return out
}

// joinWords joins words with ", ".
func joinWords(ws []string) string { return strings.Join(ws, ", ") }
