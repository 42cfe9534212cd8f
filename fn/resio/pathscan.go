package resio

import (
	"fmt"
	"hash/maphash"
	"io"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ScanPaths reads paths as ReadPaths does - the same files, on every core,
// with the same Problems and Notes - and keeps of it only the text of each
// file and the resources keep chooses (Kept: of the items, then of the
// functionConfigs, each in ReadPaths' order), so that a command that reads
// a repository a package at a time (check) holds its text, not every
// resource parsed. Read parses the files of one package again.
func ScanPaths(paths []string, stdin io.Reader, keep func(*yaml.RNode) bool) *Tree {
	return scanPaths(osFiles{}, paths, stdin, keep)
}

// ScanPaths is ScanPaths over the revision: paths are below Top.
func (r *Revision) ScanPaths(paths []string, keep func(*yaml.RNode) bool) *Tree {
	return scanPaths(r.files, paths, nil, keep)
}

// scanPaths is ScanPaths over files.
func scanPaths(files fileSystem, paths []string, stdin io.Reader, keep func(*yaml.RNode) bool) *Tree {
	t := &Tree{at: map[string]int{}, seed: maphash.MakeSeed(), paths: true}
	var keptConfigs []*yaml.RNode
	eachPathFile(files, paths, stdin, func(f pathFile) pathFile {
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
		if f.path != "" {
			f.names, f.count = namesOf(f.res), len(f.res.Items)+len(f.res.FunctionConfigs)
		}
		f.res = kept
		return f
	}, func(f pathFile) {
		t.Problems = append(t.Problems, f.res.Problems...)
		t.Notes = append(t.Notes, f.res.Notes...)
		t.Kept = append(t.Kept, f.res.Items...)
		keptConfigs = append(keptConfigs, f.res.FunctionConfigs...)
		if f.path == "" || f.count == 0 {
			return // a problem, or a file of no resource: nothing to read again
		}
		t.at[f.path] = len(t.Files)
		t.Files = append(t.Files, TreeFile{Path: f.path, Resources: f.count, Names: f.names})
		t.text = append(t.text, f.data)
	})
	t.Kept = append(t.Kept, keptConfigs...)
	return t
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
// files as ReadPaths gives them (the items, then the functionConfigs).
func (t *Tree) readPathFiles(files []string) (*Resources, error) {
	r := &Resources{}
	var configs []*yaml.RNode
	for _, p := range files {
		i, ok := t.at[p]
		if !ok || t.text[i] == nil {
			return nil, fmt.Errorf("%s: not read, or released", p)
		}
		one := &Resources{docs: r.docs}
		one.parse(p, t.text[i])
		r.docs = one.docs
		r.Items = append(r.Items, one.Items...)
		configs = append(configs, one.FunctionConfigs...)
	}
	r.FunctionConfigs = configs
	return r, nil
}
