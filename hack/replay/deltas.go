//go:build devtools

package main

import (
	"errors"
	"path"
	"sort"
	"strings"
)

// identity keys a trust value across a commit as diff tells objects apart:
// a document with a kind and a name by its directory (moving it between
// files of a directory is no change), any other by its file.
func identity(p place) string {
	where := p.File
	if p.Doc != "" && !strings.HasPrefix(p.Doc, "document ") {
		where = path.Dir(p.File)
	}
	return where + "\x00" + p.Doc + "\x00" + p.Path
}

// valueAt is one trust value the finder saw.
type valueAt struct {
	place place
	cas   caSet
}

// side collects the trust values of one side of a commit by identity (a
// second value of the same identity in the directory - a duplicate object
// - is told apart by its file).
type side map[string]valueAt

func (s side) add(found map[place]caSet) {
	places := make([]place, 0, len(found))
	for p := range found {
		places = append(places, p)
	}
	sort.Slice(places, func(i, j int) bool { return identity(places[i])+places[i].File < identity(places[j])+places[j].File })
	for _, p := range places {
		key := identity(p)
		if _, dup := s[key]; dup {
			key += "\x00" + p.File
		}
		s[key] = valueAt{place: p, cas: found[p]}
	}
}

// trustDeltas compares the trust values of a commit's two sides: every
// value whose set of CAs differs, appeared with CAs or disappeared.
func trustDeltas(base, head side) []trustDelta {
	keys := map[string]bool{}
	for k := range base {
		keys[k] = true
	}
	for k := range head {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []trustDelta
	for _, k := range sorted {
		o, n := base[k], head[k]
		d := trustDelta{Old: o.place, New: n.place, CAs: caSet{}}
		for sha, subject := range o.cas {
			d.CAs[sha] = subject
			if _, kept := n.cas[sha]; !kept {
				d.Removed = append(d.Removed, sha)
			}
		}
		for sha, subject := range n.cas {
			d.CAs[sha] = subject
			if _, kept := o.cas[sha]; !kept {
				d.Added = append(d.Added, sha)
			}
		}
		if len(d.Added)+len(d.Removed) > 0 {
			sort.Strings(d.Added)
			sort.Strings(d.Removed)
			out = append(out, d)
		}
	}
	return out
}

// finderResult is what the finder makes of a commit's changed files.
type finderResult struct {
	Deltas []trustDelta
	// Unreadable are changed manifests the finder could not parse on a
	// side (Helm templates, JSONC): it compares nothing there.
	Unreadable []string
	// Missing are changed files whose blob the repository lacks.
	Missing []string
}

// findChanges runs the finder over both sides of every changed manifest
// and certificate file outside hidden directories (diff reads none of
// those) and compares.
func findChanges(b *blobReader, changes []change, k kustomizeDirs) (finderResult, error) {
	var res finderResult
	base, head := side{}, side{}
	for _, c := range changes {
		if isHidden(c.Path) || !isManifest(c.Path) && !isCertFile(c.Path) {
			continue
		}
		old, errOld := b.blob(c.OldBlob)
		cur, errNew := b.blob(c.NewBlob)
		if errors.Is(errOld, errMissingObject) || errors.Is(errNew, errMissingObject) {
			res.Missing = append(res.Missing, c.Path)
			continue
		}
		if errOld != nil || errNew != nil {
			return res, errors.Join(errOld, errNew)
		}
		oldFound, errOld := findTrust(c.Path, old)
		newFound, errNew := findTrust(c.Path, cur)
		if errOld != nil || errNew != nil {
			res.Unreadable = append(res.Unreadable, c.Path)
			continue
		}
		base.add(classify(oldFound, k))
		head.add(classify(newFound, k))
	}
	res.Deltas = trustDeltas(base, head)
	for i, d := range res.Deltas {
		res.Deltas[i].Lenient = k.under(d.at().File)
	}
	return res, nil
}

// classify names the certificate files of a kustomization's directory as
// what they may be: a generator's input.
func classify(found map[place]caSet, k kustomizeDirs) map[place]caSet {
	out := make(map[place]caSet, len(found))
	for p, cas := range found {
		if p.Kind == kindCertFile && k.under(p.File) {
			p.Kind = kindKustomizeInput
		}
		out[p] = cas
	}
	return out
}
