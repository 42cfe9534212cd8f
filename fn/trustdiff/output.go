package trustdiff

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// JSON writes r as the stable JSON schema rotate-certs.dev/diff/v1.
func JSON(r Result) ([]byte, error) {
	r = r.nonNil()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// nonNil returns r with empty lists instead of nil ones, so that JSON
// shows [] rather than null.
func (r Result) nonNil() Result {
	for i := range r.Trust {
		t := &r.Trust[i]
		t.Added, t.Removed, t.Kept, t.Readers = orEmpty(t.Added), orEmpty(t.Removed), orEmpty(t.Kept), orEmpty(t.Readers)
	}
	for i := range r.Breaks {
		r.Breaks[i].Readers = orEmpty(r.Breaks[i].Readers)
	}
	r.Trust, r.Breaks, r.Planted, r.Rolls = orEmpty(r.Trust), orEmpty(r.Breaks), orEmpty(r.Planted), orEmpty(r.Rolls)
	r.Rollouts, r.Alerts, r.Policies, r.Facts = orEmpty(r.Rollouts), orEmpty(r.Alerts), orEmpty(r.Policies), orEmpty(r.Facts)
	r.CertificateFiles = orEmpty(r.CertificateFiles)
	return r
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// verdictLine is the result in one line; it says when files were not read.
func (r Result) verdictLine(allowUnexplained bool) string {
	v := r.verdict(allowUnexplained)
	if n := len(r.Incomplete); n > 0 {
		v += fmt.Sprintf(" (%d unchanged file(s) not read)", n)
	}
	return v
}

func (r Result) verdict(allowUnexplained bool) string {
	switch {
	case len(r.Breaks) > 0:
		return "FAIL: this change breaks trust"
	case len(r.Planted) > 0 && !allowUnexplained:
		return "FAIL: this change plants trust nothing explains"
	case len(r.Planted) > 0:
		return "PASS with warnings: planted trust allowed by --allow-unexplained"
	case len(r.Facts) > 0:
		return "PASS with warnings: nothing breaks, nothing is planted; read the warnings"
	case r.Empty():
		return "PASS: no change to trust"
	case r.judged():
		return "PASS: no change to trust in what is read; certificate files changed, not judged"
	}
	return "PASS: trust changes, nothing breaks, nothing is planted"
}

// Counts is the summary in words.
func (r Result) Counts() string {
	s := r.Summary
	out := fmt.Sprintf("%d CA(s) added, %d removed, %d break(s), %d planted, %d roll(s), %d Cluster API rollout(s), %d alert change(s), %d policy change(s)",
		s.Added, s.Removed, s.Breaks, s.Planted, s.Rolls, len(r.Rollouts), len(r.Alerts), len(r.Policies))
	if n := len(r.CertificateFiles); n > 0 {
		out += fmt.Sprintf(", %d certificate file(s) changed (not judged)", n)
	}
	if len(r.Facts) > 0 {
		out += fmt.Sprintf(", %d warning(s)", len(r.Facts))
	}
	return out
}

// sections are the parts of r, in the order every format shows them: each
// entry one object of the JSON, said apart from its place (entry).
func (r Result) sections() []section {
	var out []section
	add := func(title string, entries []entry) {
		if len(entries) > 0 {
			out = append(out, section{title: title, entries: entries})
		}
	}
	add("Breaks", mapEntries(r.Breaks, breakEntry))
	add("Planted", mapEntries(r.Planted, plantedEntry))
	add("Warnings", mapEntries(r.Facts, factEntry))
	add("Trust", mapEntries(r.Trust, trustEntry))
	add("Rolls", mapEntries(r.Rolls, rollEntry))
	add("Cluster API rollouts", mapEntries(r.Rollouts, changeEntry))
	add("Alerts", mapEntries(r.Alerts, changeEntry))
	add("Policies", mapEntries(r.Policies, changeEntry))
	add("Not read", mapEntries(r.Incomplete, func(i Incomplete) entry {
		return entry{text: []string{i.Reason + " (unreadable at BASE and HEAD alike, and unchanged: not judged)"}}
	}))
	add("Certificate files", mapEntries(r.CertificateFiles, func(c CertFileChange) entry { return entry{text: []string{certFileLine(c)}} }))
	return out
}

func mapEntries[T any](xs []T, f func(T) entry) []entry {
	out := make([]entry, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// placeOf is where r is, for a line: its file, its document when its
// name is not the only one of its directory (identity.go), and the
// kustomization that built it.
func (r Resource) placeOf() string {
	at := r.File
	if r.place != "" {
		at = r.place
	}
	if r.Kustomization != "" && r.Kustomization != r.File {
		at += " built by " + r.Kustomization
	}
	return at
}

// rollEntry words a roll: now, or in its wave.
func rollEntry(w Roll) entry {
	line := w.Resource.String() + " rolls now"
	if w.Wave != WaveNow && w.Wave != "" {
		line = w.Resource.String() + " rolls later, in " + w.Wave
	}
	return entry{text: []string{line}, place: w.Resource.placeOf()}
}

// breakEntry words a break; its place is the certificate's file and, when
// another, the trust object's (with their packages when they differ), and
// the other places that hold the certificate.
func breakEntry(b Break) entry {
	needs := b.Needs.Subject
	if b.Needs.SHA256 != "" {
		needs += " sha256:" + short(b.Needs.SHA256)
	}
	domain := ""
	if b.Domain != "" {
		domain = " (trust domain " + b.Domain + ")"
	}
	line := fmt.Sprintf("%s %s (%s, sha256:%s) needs CA %s from %s %s%s, which consumers %s will not have: %s",
		b.Certificate.Resource, b.Certificate.Key, b.Certificate.Subject, short(b.Certificate.SHA256), needs,
		b.Trust.Resource, b.Trust.Field, domain, readerNames(b.Readers), b.Reason)
	place, alone := breakPlace(b)
	return entry{text: []string{line}, place: place, alone: alone}
}

// breakPlace is where a break is: "CERT-FILE against TRUST-FILE", each
// with its package when they are in different packages; and, said when
// the break is said alone, where else the certificate is held.
func breakPlace(b Break) (place, alone string) {
	cert, trust := b.Certificate.Resource.placeOf(), b.Trust.Resource.placeOf()
	if b.Certificate.Package != b.Trust.Package { // across packages: name both
		cert, trust = cert+inPackage(b.Certificate.Package), trust+inPackage(b.Trust.Package)
	}
	place = cert
	if trust != cert {
		place += " against " + trust
	}
	if n := len(b.AlsoAt); n > 0 {
		alone = "; also held at " + b.AlsoAt[0].Resource.placeOf()
		if n > 1 {
			alone += fmt.Sprintf(" and %d more", n-1)
		}
	}
	return place, alone
}

// inPackage words a package directory.
func inPackage(dir string) string {
	if dir == "" {
		return " of no package"
	}
	return " of package " + dir
}

// plantedEntry words planted trust.
func plantedEntry(p Planted) entry {
	where := p.Resource.String() + " " + p.Field
	if p.Annotation != "" {
		where = p.Resource.String() + " annotation " + p.Annotation
	}
	return entry{text: []string{fmt.Sprintf("%s: CA %s sha256:%s: %s", where, p.Subject, short(p.SHA256), p.Reason)}, place: p.Resource.placeOf()}
}

// factEntry words a warning: the object and field, the certificate when
// it is about one, what it is.
func factEntry(f Fact) entry {
	what := f.Resource.String() + " " + f.Field
	if f.SHA256 != "" {
		what += fmt.Sprintf(": %s sha256:%s", f.Subject, short(f.SHA256))
	}
	return entry{text: []string{what + ": " + f.Message}, place: f.Resource.placeOf()}
}

// trustEntry words the change of one trust object: the object and its
// bundle, what reads it, then one line per CA (+ added, - removed, =
// kept). Its package is not said: its file is.
func trustEntry(t TrustChange) entry {
	head := t.Resource.String() + " " + t.Field
	if t.Bundle != "" {
		head += " of bundle " + t.Bundle
	}
	read := "read by nothing in the tree"
	if len(t.Readers) > 0 {
		read = "read by " + readerNames(t.Readers)
	}
	lines := []string{head, read}
	for _, l := range []struct {
		sign string
		cas  []CA
	}{{"+", t.Added}, {"-", t.Removed}, {"=", t.Kept}} {
		for _, c := range l.cas {
			lines = append(lines, fmt.Sprintf("%s %s sha256:%s notAfter %s %s", l.sign, c.Subject, short(c.SHA256), c.NotAfter.UTC().Format(time.DateOnly), whyWords(c)))
		}
	}
	return entry{text: lines, place: t.Resource.placeOf()}
}

// whyWords is a CA's why, with its source.
func whyWords(c CA) string {
	switch {
	case c.Source != "" && c.Provenance != "":
		return c.Why + " (" + c.Source + "; " + c.Provenance + ")"
	case c.Source != "":
		return c.Why + " (" + c.Source + ")"
	case c.Provenance != "":
		return c.Why + " (" + c.Provenance + ")"
	}
	return c.Why
}

// changeEntry words a change.
func changeEntry(c Change) entry {
	return entry{text: []string{c.Resource.String() + ": " + c.Change}, place: c.Resource.placeOf()}
}

// readerNames names readers.
func readerNames(cs []Reader) string {
	var ws []string
	for _, c := range cs {
		w := c.Resource.String() + " via " + c.Via
		if c.Once {
			w += " (reads once)"
		}
		ws = append(ws, w)
	}
	return strings.Join(ws, ", ")
}

// short is the first 12 digits of a fingerprint.
func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// tablePlaces is how many places a line of the table names when the same
// change is made in many (the JSON names every one).
const tablePlaces = 5

// Table writes r as text for a terminal: each section headed by its
// count of objects, the same change in many places one block.
func Table(r Result, allowUnexplained bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n", r.verdictLine(allowUnexplained), r.Counts())
	for _, s := range r.sections() {
		fmt.Fprintf(&b, "\n%s (%d):\n", strings.ToUpper(s.title), len(s.entries))
		for _, blk := range s.blocks() {
			for _, l := range blk.lines(tablePlaces) {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
	}
	return b.String()
}
