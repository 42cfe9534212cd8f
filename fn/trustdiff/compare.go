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
	// Provenance says, for a CA nothing explains, what else holds it and
	// since when: introduced with objects that gained it in the same
	// change; "" when nothing else holds it.
	Provenance string `json:"provenance,omitempty"`
}

// TrustChange is what a change does to one trust object.
type TrustChange struct {
	Resource Resource `json:"resource"`
	Field    string   `json:"field"`
	Bundle   string   `json:"bundle,omitempty"`
	// Package is the directory of the policy package that holds the
	// object, "" when none does: two clusters hold objects of the same
	// name.
	Package string `json:"package,omitempty"`
	Added   []CA   `json:"added"`
	Removed []CA   `json:"removed"`
	Kept    []CA   `json:"kept"`
	// Readers are what reads the object, at HEAD (at BASE when HEAD has
	// it not).
	Readers []Reader `json:"consumers"`
}

// Change is a change said in words: a roll-out, an alert rule, a policy.
type Change struct {
	Resource Resource `json:"resource"`
	Change   string   `json:"change"`
}

// Roll is a workload the change rolls.
type Roll struct {
	Resource Resource `json:"resource"`
	// Wave is when it rolls: WaveNow for a workload whose pod template
	// the change changes, else the wave of a roll-out in waves that rolls
	// it later ("bundle B: wave N of M, due T").
	Wave string `json:"wave"`
}

// WaveNow is the wave of a roll the change makes itself: the pod template
// changes, and the workload rolls when the change is applied.
const WaveNow = "now"

// Summary counts the result.
type Summary struct {
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Breaks  int `json:"breaks"`
	Planted int `json:"planted"`
	Rolls   int `json:"rolls"`
	// Facts counts the warnings (Result.Facts).
	Facts int `json:"facts"`
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
	// CertificateFiles are the certificate and key files no build reads
	// that the change touches: listed, not judged.
	CertificateFiles []CertFileChange `json:"certificateFiles"`
	// Facts are the warnings a reviewer needs (Fact): they leave the exit
	// status as it is.
	Facts []Fact `json:"facts"`
	// Incomplete are the files read on neither side that the change
	// leaves as they were (set by the caller that read the trees).
	Incomplete []Incomplete `json:"incomplete,omitempty"`
}

// Empty reports whether the change does nothing the diff reports.
func (r Result) Empty() bool {
	return r.judged() && len(r.CertificateFiles) == 0
}

// judged reports whether the change does nothing to what the diff judges:
// all but the certificate files.
func (r Result) judged() bool {
	return len(r.Trust)+len(r.Breaks)+len(r.Planted)+len(r.Rolls)+len(r.Rollouts)+len(r.Alerts)+len(r.Policies)+len(r.Facts) == 0
}

// Compare says what changing base into head does to trust, verified at
// now. It reads only its arguments.
func Compare(base, head *Model, now time.Time) Result {
	r := Result{SchemaVersion: schemaVersion, Now: now.UTC()}
	r.Trust = trustChanges(base, head)
	r.Breaks = breaks(base, head, now)
	r.Planted = append(plantedCAs(r.Trust), memoryChanges(base, head, now)...)
	r.Rolls = rolls(base, head)
	r.Rollouts = rollouts(base, head)
	r.Alerts = alertChanges(base, head)
	r.Policies = policyChanges(base, head)
	r.CertificateFiles = certFileChanges(base, head)
	r.Facts = facts(base, head, now)
	for _, t := range r.Trust {
		r.Summary.Added += len(t.Added)
		r.Summary.Removed += len(t.Removed)
	}
	r.Summary.Breaks, r.Summary.Planted, r.Summary.Rolls, r.Summary.Facts = len(r.Breaks), len(r.Planted), len(r.Rolls), len(r.Facts)
	return r
}

// trustIndex maps trust objects by key.
func trustIndex(t *Model) map[string]*TrustObject {
	out := make(map[string]*TrustObject, len(t.Trust))
	for _, o := range t.Trust {
		out[o.key()] = o
	}
	return out
}

// pairs returns every trust object key of either tree, head's order first,
// with the object of each side (nil when absent).
func pairs(base, head *Model) (keys []string, b, h map[string]*TrustObject) {
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
func trustChanges(base, head *Model) []TrustChange {
	keys, b, h := pairs(base, head)
	prior := newHistory(base)
	var out []TrustChange
	for _, k := range keys {
		bo, ho := b[k], h[k]
		bs, hs := shas(bo), shas(ho)
		tc := TrustChange{}
		if ho != nil {
			tc.Resource, tc.Field, tc.Bundle, tc.Package, tc.Readers = ho.Resource, ho.Field, ho.Bundle, ho.Package, ho.Readers
			for _, c := range uniqueCAs(ho) {
				ca := byRule(explain(head, ho, c, bs[sha(c)], prior), bo, ho)
				if bs[sha(c)] {
					tc.Kept = append(tc.Kept, ca)
				} else {
					tc.Added = append(tc.Added, ca)
				}
			}
		} else {
			tc.Resource, tc.Field, tc.Bundle, tc.Package, tc.Readers = bo.Resource, bo.Field, bo.Bundle, bo.Package, bo.Readers
		}
		if bo != nil {
			for _, c := range uniqueCAs(bo) {
				if !hs[sha(c)] {
					tc.Removed = append(tc.Removed, byRule(explain(base, bo, c, true, nil), nil, bo))
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
		for _, c := range o.cas {
			out[sha(c)] = true
		}
	}
	return out
}

// uniqueCAs returns o's CAs without repeats, in data order.
func uniqueCAs(o *TrustObject) []*x509.Certificate {
	return pki.NewSet(o.cas...).List()
}

// issuedBeside names the certificate beside o in its own object that CA c
// signed (a Secret's ca.crt beside the tls.crt it issued, as cert-manager
// and Envoy Gateway's certgen write them); "" when none.
func issuedBeside(t *Model, o *TrustObject, c *x509.Certificate) string {
	if t.byResource == nil {
		t.byResource = map[string][]cert{}
		for _, x := range t.certs {
			t.byResource[x.resource.id()] = append(t.byResource[x.resource.id()], x)
		}
	}
	for _, x := range t.byResource[o.Resource.id()] {
		if pki.Issued(c, x.cert) {
			return "issued " + x.resource.String() + " " + x.key
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
					Reason: plantedReason(c)})
			}
		}
	}
	return out
}

// rolls lists the workloads whose pod template the change changes (they
// roll now), then those a roll-out in waves at HEAD rolls later that it did
// not at BASE, with their wave.
func rolls(base, head *Model) []Roll {
	before := map[string]workload{}
	for _, w := range base.workloads {
		before[w.resource.id()] = w
	}
	var now, later []Roll
	for _, w := range head.workloads {
		b, ok := before[w.resource.id()]
		switch {
		case ok && b.template != w.template:
			now = append(now, Roll{Resource: w.resource, Wave: WaveNow})
		case w.wave != "" && (!ok || b.wave != w.wave):
			later = append(later, Roll{Resource: w.resource, Wave: w.wave})
		}
	}
	return append(now, later...)
}

// rolled returns the ids of the workloads the change rolls now: whose
// template it changes, of a kind whose template change replaces its
// running pods (policy.WorkloadKind's ReplacesPods).
func rolled(base, head *Model) map[string]bool {
	replaces := map[string]bool{}
	for _, w := range head.workloads {
		replaces[w.resource.id()] = w.replaces
	}
	out := map[string]bool{}
	for _, r := range rolls(base, head) {
		if r.Wave == WaveNow && replaces[r.Resource.id()] {
			out[r.Resource.id()] = true
		}
	}
	return out
}

// rollouts lists the Cluster API objects whose machine templates change.
func rollouts(base, head *Model) []Change {
	before := map[string]string{}
	for _, r := range base.rollouts {
		before[r.resource.id()] = r.digest
	}
	var out []Change
	for _, r := range head.rollouts {
		if d, ok := before[r.resource.id()]; ok && d != r.digest {
			out = append(out, Change{Resource: r.resource, Change: "its machines roll out: the machine template or rollout fields changed"})
		}
	}
	return out
}

// alertChanges lists the alert rules added and removed.
func alertChanges(base, head *Model) []Change {
	id := func(a alert) string { return a.resource.id() + "\x00" + a.name }
	in := func(t *Model) map[string]bool {
		m := map[string]bool{}
		for _, a := range t.alerts {
			m[id(a)] = true
		}
		return m
	}
	b, h := in(base), in(head)
	var out []Change
	for _, a := range head.alerts {
		if !b[id(a)] {
			out = append(out, Change{Resource: a.resource, Change: "alert " + a.name + " added"})
		}
	}
	for _, a := range base.alerts {
		if !h[id(a)] {
			out = append(out, Change{Resource: a.resource, Change: "alert " + a.name + " removed"})
		}
	}
	return out
}

// joinWords joins words with ", ".
func joinWords(ws []string) string { return strings.Join(ws, ", ") }
