package resio

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/maphash"
	"io"
	"path/filepath"
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/kbuild"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ScanPaths reads paths as ReadPaths does - the same files, on every
// core - and keeps of them the text of each file and the resources keep
// chooses (Kept: of the items, then of the functionConfigs, each in
// ReadPaths' order), so that a command that reads a repository a package
// at a time (check) holds its text, not every resource parsed. Read parses
// the files of one package.
//
// keep must choose only RotationPolicies: a file whose text cannot hold
// one, name other files (a path annotation) or be a template (mayMatter)
// is not parsed until Read parses it, so that a file is parsed once, not
// twice. Notes are ReadPaths'; Problems are what the scan found, and Read
// gives the problems of the files the scan did not parse: Problems puts
// both in ReadPaths' order.
func ScanPaths(paths []string, stdin io.Reader, keep func(*yaml.RNode) bool) *Tree {
	return scanPaths(osFiles{}, paths, stdin, keep, false)
}

// ScanBuilt is ScanPaths as ReadBuilt reads: a directory named is read
// with its kustomizations built. What it builds is held built, as one
// entry of Files (its path the directory's, its Names the files its
// resources name), which Read hands out as it holds it; the directories
// without a kustomization are held as text.
func ScanBuilt(paths []string, stdin io.Reader, keep func(*yaml.RNode) bool) *Tree {
	return scanPaths(osFiles{}, paths, stdin, keep, true)
}

// scanPaths is ScanPaths over files, or ScanBuilt when build is true.
func scanPaths(files fileSystem, paths []string, stdin io.Reader, keep func(*yaml.RNode) bool, build bool) *Tree {
	t := &Tree{at: map[string]int{}, seed: maphash.MakeSeed(), paths: true, unread: map[int]bool{}}
	var keptConfigs []*yaml.RNode
	var built func(root string, seen map[string]bool) bool
	if build {
		built = func(root string, seen map[string]bool) bool { return t.builtDir(files, root, seen, keep, &keptConfigs) }
	}
	eachPathFile(files, paths, stdin, func(f pathFile) pathFile {
		if f.path != "-" && !mayMatter(f.data) {
			f.unread = true
			return f
		}
		f = parsePathFile(f)
		kept := &Resources{Problems: f.res.Problems, Notes: f.res.Notes}
		for _, n := range f.res.Items {
			if keep(n) {
				kept.Items = append(kept.Items, n)
			}
		}
		for _, n := range f.res.FunctionConfigs {
			if keep(n) {
				kept.FunctionConfigs = append(kept.FunctionConfigs, n)
			}
		}
		f.names, f.count = namesOf(f.res), len(f.res.Items)+len(f.res.FunctionConfigs)
		f.res = kept
		return f
	}, func(f pathFile) {
		for _, p := range f.res.Problems {
			t.problems = append(t.problems, p)
			t.problemAt = append(t.problemAt, len(t.Files))
		}
		t.Notes = append(t.Notes, f.res.Notes...)
		t.Kept = append(t.Kept, f.res.Items...)
		keptConfigs = append(keptConfigs, f.res.FunctionConfigs...)
		if f.path == "" || (!f.unread && f.count == 0) {
			return // a problem, or a file of no resource: nothing to read again
		}
		if f.unread {
			t.unread[len(t.Files)] = true
		}
		t.at[f.path] = len(t.Files)
		t.Files = append(t.Files, TreeFile{Path: f.path, Resources: f.count, Names: f.names})
		t.text = append(t.text, f.data)
		t.held = append(t.held, nil)
	}, built)
	t.Kept = append(t.Kept, keptConfigs...)
	return t
}

// builtDir reads the directory root as ReadBuilt does (builtDir) into one
// entry of t that holds what it read, and reports whether it did: a
// directory without a kustomization is left to be scanned as text, as
// ScanPaths scans it.
func (t *Tree) builtDir(files fileSystem, root string, seen map[string]bool, keep func(*yaml.RNode) bool, keptConfigs *[]*yaml.RNode) bool {
	found := walkNamed(files, root, manifestsAndJSON, []string{"Kustomization"})
	if !slices.ContainsFunc(found.Files, func(f string) bool { return kbuild.IsKustomization(filepath.Base(f)) }) {
		return false
	}
	r := &Resources{}
	r.builtDir(files, root, seen)
	for _, p := range r.Problems {
		t.problems = append(t.problems, p)
		t.problemAt = append(t.problemAt, len(t.Files))
	}
	t.Notes = append(t.Notes, r.Notes...)
	for _, n := range r.Items {
		if keep(n) {
			t.Kept = append(t.Kept, n)
		}
	}
	for _, n := range r.FunctionConfigs {
		if keep(n) {
			*keptConfigs = append(*keptConfigs, n)
		}
	}
	path := filepath.ToSlash(root)
	t.at[path] = len(t.Files)
	t.Files = append(t.Files, TreeFile{Path: path, Resources: len(r.Items) + len(r.FunctionConfigs), Names: namesOf(r)})
	t.text = append(t.text, []byte{})
	t.held = append(t.held, r)
	return true
}

// mayMatter reports whether a file's text may hold what the scan keeps or
// says: a RotationPolicy (its kind, spelled out or escaped in a quoted
// scalar), a resource that names a file of its own (a path annotation),
// or a template that does not parse (a note). Any other file is read
// only when its package is.
func mayMatter(data []byte) bool {
	for _, s := range [][]byte{[]byte("RotationPolicy"), []byte("config.kubernetes.io/path"), []byte(`\`), []byte("{{")} {
		if bytes.Contains(data, s) {
			return true
		}
	}
	return false
}

// namesOf returns the files the resources of r name (their path
// annotations; "" for none), each once, in order.
func namesOf(r *Resources) []string {
	var out []string
	seen := map[string]bool{}
	for _, list := range [][]*yaml.RNode{r.Items, r.FunctionConfigs} {
		for _, n := range list {
			name, _ := kube.FileOf(n)
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

// readPathFiles is Read of a tree ScanPaths scanned: the resources of
// files as ReadPaths gives them (the items, then the functionConfigs), and
// the problems of the files the scan did not parse.
func (t *Tree) readPathFiles(files []string) (*Resources, error) {
	r := &Resources{}
	var configs []*yaml.RNode
	for _, p := range files {
		i, ok := t.at[p]
		if !ok || t.text[i] == nil {
			return nil, fmt.Errorf("%s: not read, or released", p)
		}
		if held := t.held[i]; held != nil {
			r.Items = append(r.Items, held.Items...)
			configs = append(configs, held.FunctionConfigs...)
			continue
		}
		one := &Resources{docs: r.docs}
		one.parse(p, t.text[i])
		r.docs = one.docs
		r.Items = append(r.Items, one.Items...)
		configs = append(configs, one.FunctionConfigs...)
		if t.unread[i] {
			r.Problems = append(r.Problems, one.Problems...)
		}
	}
	r.FunctionConfigs = configs
	return r, nil
}

// InOrder returns the scan's Problems and read, problems Read gave, in
// the order ReadPaths gives them: by file, each file's problems as found.
func (t *Tree) InOrder(read []Problem) []Problem {
	type placed struct {
		at, scan int
		p        Problem
	}
	all := make([]placed, 0, len(t.problems)+len(read))
	for i, p := range t.problems {
		all = append(all, placed{t.problemAt[i], 0, p})
	}
	for _, p := range read {
		all = append(all, placed{t.at[p.Path], 1, p})
	}
	slices.SortStableFunc(all, func(a, b placed) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.scan, b.scan)) })
	var out []Problem
	for _, x := range all {
		out = append(out, x.p)
	}
	return out
}
