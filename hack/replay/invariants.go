//go:build devtools

package main

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The invariants, by the id a violation carries (docs/design/replay.md
// says why each matters).
const (
	invSelfEmpty = "1 diff C C is empty"
	invQuiet     = "2 a commit no build reads is quiet"
	invReported  = "3 every trust change is reported"
	invRoll      = "4 no roll without a pod-template change"
	invExit2     = "5 exit 2 comes from a touched file"
	invCrash     = "crash"
)

// invariants is the order of the report's columns.
var invariants = []string{invSelfEmpty, invQuiet, invReported, invRoll, invExit2, invCrash}

// violation is one broken invariant at one commit. Kind says which shape
// of it (the lists diff printed, the kind of place, the exit status);
// Detail names files, objects and CAs by subject and SHA-256, never more.
type violation struct {
	Repo      string `json:"repo"`
	Commit    string `json:"commit"`
	Invariant string `json:"invariant"`
	Kind      string `json:"kind"`
	Detail    string `json:"detail"`
}

// checkCrash: a run that panicked, was killed or timed out, exited with
// a status diff does not have, or exited 0 or 1 without its JSON.
func checkCrash(r diffRun) []violation {
	if r.Crash == "" {
		return nil
	}
	return []violation{{Invariant: invCrash, Kind: crashKind(r.Crash),
		Detail: fmt.Sprintf("diff %s %s: %s", short(r.Base), short(r.Head), clip(r.Crash, 300))}}
}

func crashKind(crash string) string {
	for _, k := range []string{"panic", "fatal error", "timed out", "exit status", "without the JSON"} {
		if strings.Contains(crash, k) {
			return k
		}
	}
	return "killed"
}

// quietKind says what a run that must be quiet - exit 0, nothing listed -
// did instead, as a violation's kind and detail; "" when it was quiet. A
// run that crashed is counted as a crash only.
func quietKind(r diffRun) (kind, detail string) {
	var listed []string
	if r.Out != nil {
		listed = r.Out.listed()
	}
	switch {
	case r.Crash != "":
		return "", ""
	case r.Exit != 0:
		detail = firstError(r.Stderr)
		if len(listed) > 0 {
			detail += "; also listed " + strings.Join(listed, " ")
		}
		return fmt.Sprintf("exit %d", r.Exit), detail
	case len(listed) > 0:
		return "listed " + strings.Join(names(listed), ","),
			strings.Join(append(listed, firstListed(r.Out)...), "; ")
	}
	return "", ""
}

// names strips the counts of listed's "rolls=55".
func names(listed []string) []string {
	var out []string
	for _, l := range listed {
		name, _, _ := strings.Cut(l, "=")
		out = append(out, name)
	}
	return out
}

// firstListed names the first trust change and roll, for a detail.
func firstListed(o *diffOutput) []string {
	var out []string
	if len(o.Trust) > 0 {
		out = append(out, "first trust change: "+o.Trust[0].Resource.String()+" "+o.Trust[0].Field)
	}
	if len(o.Rolls) > 0 {
		out = append(out, "first roll: "+o.Rolls[0].Resource.String())
	}
	return out
}

// checkSelfEmpty: diff C C exits 0 and lists nothing.
func checkSelfEmpty(self diffRun) []violation {
	kind, detail := quietKind(self)
	if kind == "" {
		return nil
	}
	return []violation{{Invariant: invSelfEmpty, Kind: kind, Detail: detail}}
}

// checkQuiet: a commit that changes no file a build reads (and so no
// trust value) exits 0 and lists nothing.
func checkQuiet(change diffRun, buildRead bool) []violation {
	if buildRead {
		return nil
	}
	kind, detail := quietKind(change)
	if kind == "" {
		return nil
	}
	return []violation{{Invariant: invQuiet, Kind: kind, Detail: detail}}
}

// trustDelta is a trust value whose CAs the commit changes, as the finder
// sees it: its place at BASE and at HEAD (File "" on the side where it is
// not), the CAs added and removed (SHA-256s) and their subjects.
type trustDelta struct {
	Old, New       place
	Added, Removed []string
	CAs            caSet
	// Lenient: the value is in a file under a kustomization's directory
	// (a generator's input, a patch), whose objects diff may name by the
	// kustomization or by another file of the build.
	Lenient bool
}

func (d trustDelta) at() place {
	if d.New.File != "" {
		return d.New
	}
	return d.Old
}

// checkReported: every CA the finder sees added to or removed from a trust
// value is listed so by diff's trust changes for that value's file (for a
// file under a kustomization's directory, also for an object a build of
// that directory or above made). A certificate file diff lists under
// certificateFiles - changed, not judged, as the contract has it for a
// file no build reads - is reported.
func checkReported(change diffRun, deltas []trustDelta) []violation {
	if change.Out == nil {
		return nil // a run without JSON: its exit 2 or crash is counted
	}
	var out []violation
	for _, d := range deltas {
		if d.listedAsFile(change.Out.CertificateFiles) {
			continue
		}
		added, removed := map[string]bool{}, map[string]bool{}
		for _, t := range change.Out.Trust {
			if !d.covers(t.Resource) {
				continue
			}
			for _, ca := range t.Added {
				added[strings.ToLower(ca.SHA256)] = true
			}
			for _, ca := range t.Removed {
				removed[strings.ToLower(ca.SHA256)] = true
			}
		}
		missAdd, missRem := missing(d.Added, added), missing(d.Removed, removed)
		if len(missAdd)+len(missRem) == 0 {
			continue
		}
		p := d.at()
		detail := fmt.Sprintf("%s %s %s", p.File, p.Doc, p.Path)
		if len(missAdd) > 0 {
			detail += "; added, not reported: " + describe(missAdd, d.CAs)
		}
		if len(missRem) > 0 {
			detail += "; removed, not reported: " + describe(missRem, d.CAs)
		}
		out = append(out, violation{Invariant: invReported, Kind: p.Kind, Detail: strings.TrimSpace(detail)})
	}
	return out
}

// listedAsFile reports whether the delta is a certificate file's, or a
// document's without a kind, and diff lists that file among the
// certificate files the change touches.
func (d trustDelta) listedAsFile(files []certFile) bool {
	if k := d.at().Kind; k != kindCertFile && k != kindKustomizeInput && k != kindNoKind {
		return false
	}
	for _, f := range files {
		if f.File == d.Old.File || f.File == d.New.File {
			return true
		}
	}
	return false
}

// covers reports whether a trust change diff lists for r speaks of the
// delta's value: r is in the value's file; or, for a value under a
// kustomization's directory, r was built by a kustomization of that
// directory or above, or is in a file there (a generator's object is
// named by its kustomization).
func (d trustDelta) covers(r resource) bool {
	if r.File == "" {
		return false
	}
	if r.File == d.Old.File || r.File == d.New.File {
		return true
	}
	if !d.Lenient {
		return false
	}
	at := path.Dir(d.at().File)
	for _, f := range []string{r.Kustomization, r.File} {
		if dir := path.Dir(f); f != "" && (dir == "." || at == dir || strings.HasPrefix(at, dir+"/")) {
			return true
		}
	}
	return false
}

func missing(want []string, got map[string]bool) []string {
	var out []string
	for _, sha := range want {
		if !got[sha] {
			out = append(out, sha)
		}
	}
	return out
}

// checkRolls: every workload diff rolls now (wave "now", or no wave from
// a diff older than the wave field) has a pod template that changed, or is
// new; verdict reads it from git. A later wave rolls in a later change.
func checkRolls(change diffRun, verdict func(resource) templateVerdict) (out []violation, unchecked int) {
	if change.Out == nil {
		return nil, 0
	}
	for _, r := range change.Out.Rolls {
		if r.Wave != "" && r.Wave != waveNow {
			continue
		}
		switch verdict(r.Resource) {
		case templateSame:
			out = append(out, violation{Invariant: invRoll, Kind: "template unchanged, one copy in its directory",
				Detail: "rolled, pod template unchanged: " + r.Resource.String()})
		case templateSameCopies:
			out = append(out, violation{Invariant: invRoll, Kind: "template unchanged, held twice or more in its directory",
				Detail: "rolled, pod template unchanged, other copies in its directory: " + r.Resource.String()})
		case templateUnchecked:
			unchecked++
		}
	}
	return out, unchecked
}

// waveNow is the wave of a roll diff asks for in this change.
const waveNow = "now"

// lineSuffix is a ":LINE" or ":LINE:COLUMN" after a file name.
var lineSuffix = regexp.MustCompile(`(:\d+)+$`)

// namedFiles are the files of the commit's trees an error line names:
// each ": "-separated part of it, unquoted and without a line number, that
// isFile says is a file.
func namedFiles(line string, isFile func(string) bool) []string {
	var files []string
	for _, part := range strings.Split(line, ": ") {
		for _, cand := range append([]string{part}, strings.Fields(part)...) {
			cand = lineSuffix.ReplaceAllString(strings.Trim(strings.TrimSpace(cand), `"',;()`), "")
			if cand != "" && isFile(cand) && !contains(files, cand) {
				files = append(files, cand)
			}
		}
	}
	return files
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkExit2: an exit 2 of diff C^ C names, in its errors, only files the
// commit changes; one that names none is a violation of its own kind.
func checkExit2(change diffRun, touched map[string]bool, isFile func(string) bool) []violation {
	if change.Exit != 2 || change.Crash != "" {
		return nil
	}
	var named, untouched []string
	for _, line := range errorLines(change.Stderr) {
		files := namedFiles(line, isFile)
		named = append(named, files...)
		if !slices.ContainsFunc(files, func(f string) bool { return touched[f] }) {
			// A line naming a touched file comes from it: a build
			// that fails names the input the commit changed beside its
			// kustomization.
			for _, f := range files {
				untouched = append(untouched, f+": "+clip(line, 200))
			}
		}
	}
	switch {
	case len(named) == 0:
		return []violation{{Invariant: invExit2, Kind: "exit 2 without a file", Detail: firstError(change.Stderr)}}
	case len(untouched) > 0:
		sort.Strings(untouched)
		return []violation{{Invariant: invExit2, Kind: "exit 2 from an untouched file",
			Detail: fmt.Sprintf("%d untouched: %s", len(untouched), strings.Join(untouched[:min(3, len(untouched))], " | "))}}
	}
	return nil
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
