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

// side collects the trust values of one side of a commit.
type side []valueAt

func (s *side) add(found map[place]caSet) {
	for p, cas := range found {
		*s = append(*s, valueAt{place: p, cas: cas})
	}
}

// byIdentity keys the values of a side by identity. A document whose
// directory and name several files hold, on either side (ambiguous: a
// duplicate object), is told apart by its file, as diff tells them.
func (s side) byIdentity(ambiguous map[string]bool) map[string]valueAt {
	out := make(map[string]valueAt, len(s))
	for _, v := range s {
		key := identity(v.place)
		if ambiguous[docIdentity(v.place)] {
			key += "\x00" + v.place.File
		}
		out[key] = v
	}
	return out
}

// docIdentity is a value's document as identity keys it, its path aside.
func docIdentity(p place) string {
	return strings.TrimSuffix(identity(place{File: p.File, Doc: p.Doc}), "\x00")
}

// ambiguous are the documents that two or more files hold on a side.
func ambiguous(sides ...side) map[string]bool {
	out := map[string]bool{}
	for _, s := range sides {
		files := map[string]string{}
		for _, v := range s {
			id := docIdentity(v.place)
			if f, ok := files[id]; ok && f != v.place.File {
				out[id] = true
			}
			files[id] = v.place.File
		}
	}
	return out
}

// trustDeltas compares the trust values of a commit's two sides: every
// value whose set of CAs differs, appeared with CAs or disappeared.
func trustDeltas(bs, hs side) []trustDelta {
	amb := ambiguous(bs, hs)
	base, head := bs.byIdentity(amb), hs.byIdentity(amb)
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
	var base, head side
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
