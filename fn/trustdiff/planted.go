package trustdiff

import (
	"crypto/x509"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
)

// Planted is trust a change plants: a CA added to a trust object's data
// that nothing explains, or an edit of a memory annotation that alters
// what is trusted or when it leaves.
type Planted struct {
	Resource Resource `json:"resource"`
	Field    string   `json:"field"`
	Subject  string   `json:"subject"`
	SHA256   string   `json:"sha256"`
	// Annotation is the memory annotation edited, "" for a CA in data.
	Annotation string `json:"annotation,omitempty"`
	Reason     string `json:"reason"`
}

// memory is one object's memory annotations on both sides, and the CAs
// its trust data holds on each.
type memory struct {
	res          Resource
	field        string
	before, now  map[string]string
	dataB, dataH map[string]bool
}

// memoryChanges lists the edits of the memory annotations (retired,
// unused, previous, seen) of every trust object that alter what it trusts
// or when a CA leaves it. What a render writes is not listed: a retired or
// unused line, at a time no later than now, for a CA of the data that is
// not current; a line dropped with its CA; an unused line dropped for a
// CA something at HEAD chains to again; previous and seen naming CAs the
// data or a source held.
func memoryChanges(base, head *Model, now time.Time) []Planted {
	var out []Planted
	for _, m := range memories(base, head) {
		for _, name := range []string{trustbundle.RetiredAnnotation, trustbundle.UnusedAnnotation} {
			if m.before[name] != m.now[name] {
				out = append(out, recordEdits(m, name, head, now)...)
			}
		}
		for _, name := range []string{trustbundle.PreviousAnnotation, trustbundle.SeenAnnotation} {
			if m.before[name] != m.now[name] {
				out = append(out, pemEdits(m, name, base, head)...)
			}
		}
	}
	return out
}

// memories pairs the objects of both trees that hold trust by resource.
func memories(base, head *Model) []*memory {
	byID := map[string]*memory{}
	var order []*memory
	get := func(o *TrustObject) *memory {
		m, ok := byID[o.Resource.id()]
		if !ok {
			m = &memory{res: o.Resource, field: o.Field, before: map[string]string{}, now: map[string]string{}, dataB: map[string]bool{}, dataH: map[string]bool{}}
			byID[o.Resource.id()] = m
			order = append(order, m)
		}
		return m
	}
	for _, o := range head.Trust {
		m := get(o)
		m.now = o.memory
		for s := range shas(o) {
			m.dataH[s] = true
		}
	}
	for _, o := range base.Trust {
		m := get(o)
		m.before = o.memory
		for s := range shas(o) {
			m.dataB[s] = true
		}
	}
	return order
}

// record reads a retirement record: entry (SHA-256 and key) to time;
// malformed lines are left out (the render ignores and rewrites them).
func record(text string) map[string]time.Time {
	out := map[string]time.Time{}
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		fp, at, key, err := trustbundle.ParseRecordLine(line)
		if err == nil {
			out[fp.String()+" "+key] = at
		}
	}
	return out
}

// recordWords are, by annotation, the words of a record's edits.
var recordWords = map[string]struct{ what, removed string }{
	trustbundle.RetiredAnnotation: {"retirement", "retirement line removed while the data still holds the CA: it stays trusted past its retirement"},
	trustbundle.UnusedAnnotation: {"unused", "unused line removed while the data still holds the CA and nothing chains to it: " +
		"retain.dropUnusedAfter counts again from the next render and it stays trusted longer"},
}

// recordEdits words the edits of a retired or unused record (name) that a
// render does not make: a time changed; a line added for a CA still
// current, one the data did not hold at BASE, or at a time after now (a
// render writes a line, at its time, for a CA of the data that is no
// longer current); a line dropped for a CA the data still holds and no
// source does (for unused: and nothing at HEAD chains to).
func recordEdits(m *memory, name string, head *Model, now time.Time) []Planted {
	b, h := record(m.before[name]), record(m.now[name])
	words := recordWords[name]
	var out []Planted
	add := func(entry, reason string) {
		s, _, _ := strings.Cut(entry, " ")
		out = append(out, Planted{Resource: m.res, Field: m.field, Subject: subjectIn(s, head), SHA256: s,
			Annotation: name, Reason: reason})
	}
	for _, e := range sortedKeys(h) {
		s, _, _ := strings.Cut(e, " ")
		at, was := b[e]
		switch {
		case was && !at.Equal(h[e]):
			add(e, fmt.Sprintf("%s time changed from %s to %s: it changes when the CA leaves", words.what, stamp(at), stamp(h[e])))
		case !was && (current(head, s) || !m.dataB[s] || h[e].After(now)):
			add(e, fmt.Sprintf("%s line added (%s) for a CA that is still current, was not in the data, or at a time after now: it changes when the CA leaves", words.what, stamp(h[e])))
		}
	}
	for _, e := range sortedKeys(b) {
		s, _, _ := strings.Cut(e, " ")
		if _, still := h[e]; !still && m.dataH[s] && !current(head, s) && (name != trustbundle.UnusedAnnotation || !signsAny(head, s)) {
			add(e, words.removed)
		}
	}
	return out
}

// signsAny reports whether CA s (SHA-256) of a trust object of t signed a
// certificate t presents or an intermediate of t: something chains to it.
func signsAny(t *Model, s string) bool {
	var ca *x509.Certificate
	for _, o := range t.Trust {
		for _, c := range o.cas {
			if sha(c) == s {
				ca = c
			}
		}
	}
	if ca == nil {
		return false
	}
	signed := func(c *x509.Certificate) bool {
		return string(c.RawIssuer) == string(ca.RawSubject) && c.CheckSignatureFrom(ca) == nil
	}
	for _, c := range t.certs {
		if signed(c.cert) {
			return true
		}
	}
	return slices.ContainsFunc(t.intermediates, signed)
}

// pemEdits words the CAs added to a previous or seen annotation that
// neither the object's data at base, the annotation at base, nor (for
// seen) a source at head holds: memory that could restore or pin a CA.
func pemEdits(m *memory, name string, base, head *Model) []Planted {
	before := certsIn(m.before[name])
	var out []Planted
	for _, c := range certsIn(m.now[name]).List() {
		s := sha(c)
		if before.Has(c) || m.dataB[s] || name == trustbundle.SeenAnnotation && current(head, s) {
			continue
		}
		out = append(out, Planted{Resource: m.res, Field: m.field, Subject: pki.Subject(c), SHA256: s, Annotation: name,
			Reason: "names a CA that neither the data nor a source held: memory that could restore it"})
	}
	return out
}

// certsIn returns the certificates of the PEM text of a memory annotation.
func certsIn(text string) *pki.Set {
	d, _ := pki.ScanPEM([]byte(text))
	return pki.NewSet(d.Certificates...)
}

// current reports whether CA s is current in t: a policy reads it from a
// source, or an object outside trust data holds it.
func current(t *Model, s string) bool {
	if len(t.holders[s]) > 0 {
		return true
	}
	if t.sourced == nil {
		t.sourced = map[string]bool{}
		for _, o := range t.Trust {
			for ca, r := range o.reasons {
				if r.why == WhySource {
					t.sourced[ca] = true
				}
			}
		}
	}
	return t.sourced[s]
}

// subjectIn returns the subject of CA s in either model, or a placeholder.
func subjectIn(s string, models ...*Model) string {
	for _, t := range models {
		for _, o := range t.Trust {
			for _, c := range o.cas {
				if sha(c) == s {
					return pki.Subject(c)
				}
			}
		}
	}
	return "(a CA in no trust data)"
}

// stamp formats a time for a reason.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]time.Time) []string { return slices.Sorted(maps.Keys(m)) }
