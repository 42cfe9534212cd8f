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
		t.Added, t.Removed, t.Kept, t.Consumers = orEmpty(t.Added), orEmpty(t.Removed), orEmpty(t.Kept), orEmpty(t.Consumers)
	}
	for i := range r.Breaks {
		r.Breaks[i].Consumers = orEmpty(r.Breaks[i].Consumers)
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

// Verdict is the result in one line; it says when files were not read.
func (r Result) Verdict(allowUnexplained bool) string {
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

// section is one part of the result as lines of text.
type section struct {
	title string
	lines []string
}

// sections are the parts of r, in the order every format shows them.
func (r Result) sections() []section {
	var out []section
	add := func(title string, lines []string) {
		if len(lines) > 0 {
			out = append(out, section{title, lines})
		}
	}
	add("Breaks", mapLines(r.Breaks, breakLine))
	add("Planted", mapLines(r.Planted, plantedLine))
	add("Warnings", mapLines(r.Facts, factLine))
	var trust []string
	for _, t := range r.Trust {
		trust = append(trust, trustLines(t)...)
	}
	add("Trust", trust)
	add("Rolls", mapLines(r.Rolls, rollLine))
	add("Cluster API rollouts", mapLines(r.Rollouts, changeLine))
	add("Alerts", mapLines(r.Alerts, changeLine))
	add("Policies", mapLines(r.Policies, changeLine))
	add("Not read", mapLines(r.Incomplete, func(i Incomplete) string {
		return i.Reason + " (unreadable at BASE and HEAD alike, and unchanged: not judged)"
	}))
	add("Certificate files", mapLines(r.CertificateFiles, certFileLine))
	return out
}

// rollLine words a roll, with the file of the workload: a repository of
// many clusters holds the same workload once per cluster.
func rollLine(w Roll) string {
	line := w.Resource.String() + " rolls"
	if w.Wave != "" {
		line += " (wave " + w.Wave + ")"
	}
	if w.Resource.File != "" {
		line += " in " + w.Resource.File
	}
	if w.Resource.Kustomization != "" && w.Resource.Kustomization != w.Resource.File {
		line += " (built by " + w.Resource.Kustomization + ")"
	}
	return line
}

func mapLines[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// breakLine words a break.
func breakLine(b Break) string {
	needs := b.Needs.Subject
	if b.Needs.SHA256 != "" {
		needs += " sha256:" + short(b.Needs.SHA256)
	}
	cert, trust := "", ""
	if b.Certificate.Package != b.Trust.Package { // across packages: name both
		cert, trust = inPackage(b.Certificate.Package), inPackage(b.Trust.Package)
	}
	if b.Domain != "" {
		trust += " (trust domain " + b.Domain + ")"
	}
	also := ""
	if n := len(b.AlsoAt); n > 0 {
		also = fmt.Sprintf(" (also held at %s", b.AlsoAt[0].Resource.File)
		if n > 1 {
			also += fmt.Sprintf(" and %d more", n-1)
		}
		also += ")"
	}
	return fmt.Sprintf("%s %s%s (%s, sha256:%s)%s needs CA %s from %s %s%s, which consumers %s will not have: %s",
		b.Certificate.Resource, b.Certificate.Key, cert, b.Certificate.Subject, short(b.Certificate.SHA256), also, needs,
		b.Trust.Resource, b.Trust.Field, trust, consumerList(b.Consumers), b.Reason)
}

// inPackage words a package directory.
func inPackage(dir string) string {
	if dir == "" {
		return " in no package"
	}
	return " in package " + dir
}

// plantedLine words planted trust.
func plantedLine(p Planted) string {
	where := p.Resource.String() + " " + p.Field
	if p.Annotation != "" {
		where = p.Resource.String() + " annotation " + p.Annotation
	}
	return fmt.Sprintf("%s: CA %s sha256:%s: %s", where, p.Subject, short(p.SHA256), p.Reason)
}

// factLine words a warning: the object and field, the certificate when
// it is about one, what it is.
func factLine(f Fact) string {
	where := f.Resource.String() + " " + f.Field
	if f.Resource.File != "" {
		where += " in " + f.Resource.File
	}
	if f.SHA256 != "" {
		where += fmt.Sprintf(": %s sha256:%s", f.Subject, short(f.SHA256))
	}
	return where + ": " + f.Message
}

// trustLines words the change of one trust object, one line per CA.
func trustLines(t TrustChange) []string {
	head := t.Resource.String() + " " + t.Field
	switch {
	case t.Bundle != "" && t.Package != "":
		head += " (bundle " + t.Bundle + ", package " + t.Package + ")"
	case t.Bundle != "":
		head += " (bundle " + t.Bundle + ")"
	case t.Package != "":
		head += " (package " + t.Package + ")"
	}
	if len(t.Consumers) > 0 {
		head += ", read by " + consumerList(t.Consumers)
	} else {
		head += ", read by nothing in the tree"
	}
	lines := []string{head}
	for _, l := range []struct {
		sign string
		cas  []CA
	}{{"+", t.Added}, {"-", t.Removed}, {"=", t.Kept}} {
		for _, c := range l.cas {
			lines = append(lines, fmt.Sprintf("  %s %s sha256:%s notAfter %s %s", l.sign, c.Subject, short(c.SHA256), c.NotAfter.UTC().Format(time.DateOnly), whyWords(c)))
		}
	}
	return lines
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

// changeLine words a change.
func changeLine(c Change) string { return c.Resource.String() + ": " + c.Change }

// consumerList names consumers.
func consumerList(cs []Consumer) string {
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

// Table writes r as text for a terminal.
func Table(r Result, allowUnexplained bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n", r.Verdict(allowUnexplained), r.Counts())
	for _, s := range r.sections() {
		fmt.Fprintf(&b, "\n%s:\n", strings.ToUpper(s.title))
		for _, l := range s.lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.String()
}
