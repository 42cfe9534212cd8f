package resio

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/kbuild"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Reading a tree as the cluster gets it (ReadBuilt: check and diff). A
// directory is walked by Walk's rules; then
//
//   - each directory that holds a kustomization file is built as
//     `kustomize build` builds it (package kbuild: in-process, offline);
//     the top-most build wins: a kustomization that another build reaches
//     (a base, a component) is not built again on its own, one that no
//     build reaches is; a Component no build reaches is named, not built;
//   - the directories a build read files from are not read again as plain
//     files, the others are read as ReadPaths reads them - so is the
//     directory of a kustomization that cannot be built offline, with a
//     note saying so;
//   - the certificate and key files (certificateFiles) that no build read
//     are listed with a digest of their content (CertFiles): diff lists
//     those a change touches, never judged, never shown; so are the
//     manifest files whose documents that are no object (chart values, a
//     program's test input) hold certificate or key material, with a
//     digest of that material.
//
// A build that fails is a problem of its kustomization file; what a build
// left out (a remote base, a Helm chart, a function not run) is a note.

// certificateFiles are the extensions of certificate and key files.
var certificateFiles = []string{".pem", ".crt", ".cer", ".key"}

// Built is a kustomization ReadBuilt built.
type Built struct {
	// File is its kustomization file.
	File string
	// Read are the files the build read, the kustomization's own
	// included, sorted: a change to any of them is a change of what it
	// builds.
	Read []string
}

// CertFile is a certificate or key file that no build reads.
type CertFile struct {
	// Path is the file, named as the walk named it.
	Path string
	// SHA256 is the hex SHA-256 of its content: two trees compare by it.
	// The content itself is never kept.
	SHA256 string
}

// ReadBuilt is ReadPaths with kustomizations built: see above.
func ReadBuilt(paths []string, stdin io.Reader) *Resources {
	return readPaths(osFiles{}, paths, stdin, true, nil)
}

// ReadBuiltShared is ReadBuilt (no stdin) sharing with the read before it
// and the read after it (Shared).
func ReadBuiltShared(paths []string, sh *Shared) *Resources {
	return readPaths(osFiles{}, paths, nil, true, sh)
}

// ReadBuilt is ReadBuilt (no stdin) over the revision: paths are below
// Top.
func (r *Revision) ReadBuilt(paths []string) *Resources {
	return r.ReadBuiltShared(paths, nil)
}

// ReadBuiltShared is the revision's ReadBuilt sharing with the read before
// it and the read after it (Shared); a revision not loaded is loaded
// first (readLoaded).
func (r *Revision) ReadBuiltShared(paths []string, sh *Shared) *Resources {
	return r.readLoaded(paths, true, sh)
}

// builtDir reads the directory root as ReadBuilt reads it; seen are the
// files (by absolute path) already read.
func (s *Resources) builtDir(files fileSystem, root string, seen map[string]bool) {
	var abs absPaths
	found := walkNamed(files, root, append(slices.Clip(manifestsAndJSON), certificateFiles...), []string{"Kustomization"})
	for _, err := range found.Problems {
		s.problemf("%v", err)
	}
	var manifests, certs, dirs []string
	for _, f := range found.Files {
		base := filepath.Base(f)
		if kbuild.IsKustomization(base) && !seen[abs.key(f)] {
			dirs = append(dirs, filepath.Dir(f))
		}
		switch {
		case hasExt(base, certificateFiles):
			certs = append(certs, f)
		case hasExt(base, manifestsAndJSON) && !kbuild.IsKustomization(base):
			manifests = append(manifests, f)
		}
	}
	b := buildAll(files, dirs)
	s.Notes = append(s.Notes, b.notes...)
	var plain []string
	for _, f := range manifests {
		if key := abs.key(f); !b.reached[filepath.Dir(f)] && !seen[key] {
			seen[key] = true
			plain = append(plain, f)
		}
	}
	read := &Resources{docs: s.docs, shared: s.shared}
	read.readFiles(files, plain)
	s.Problems = append(s.Problems, read.Problems...)
	s.Notes = append(s.Notes, read.Notes...)
	s.FunctionConfigs = append(s.FunctionConfigs, read.FunctionConfigs...)
	s.CertFiles = append(s.CertFiles, read.CertFiles...)
	s.Items = append(s.Items, merge(read, b.kept)...)
	for _, k := range b.kept {
		seen[abs.key(k.File)] = true
		s.Builds = append(s.Builds, Built{File: k.File, Read: k.Read})
		if k.Err != nil {
			s.Problems = append(s.Problems, Problem{Path: k.File, Message: k.Err.Error()})
		}
	}
	s.certFiles(files, certs, b.read, seen, &abs)
}

// builds are the kustomizations of a tree, built.
type builds struct {
	// kept are the builds read, in directory order: each that no other
	// build includes, failed ones too (their problem is theirs).
	kept []*kbuild.Build
	// reached are the directories the kept builds read files from, read
	// the files they read.
	reached, read map[string]bool
	notes         []string
}

// buildAll builds the kustomizations in dirs and keeps the top-most.
func buildAll(files fileSystem, dirs []string) builds {
	all := make([]*kbuild.Build, len(dirs))
	for i, d := range dirs {
		all[i] = kbuild.Run(files, d) // one at a time: kustomize keeps global state
	}
	// A build includes the kustomizations it read: one that reads more
	// comes first, so that an overlay is kept before its bases are seen.
	order := slices.Clone(all)
	slices.SortStableFunc(order, func(a, b *kbuild.Build) int { return cmp.Compare(len(roots(b)), len(roots(a))) })
	res := builds{reached: map[string]bool{}, read: map[string]bool{}}
	included := map[string]bool{}
	var components []*kbuild.Build
	for _, b := range order {
		switch {
		case included[b.Dir]:
		case b.Component:
			components = append(components, b)
		case b.NotBuilt != "":
			res.notes = append(append(res.notes, b.Notes...), b.NotBuilt+"; its directory is read as plain files")
		default:
			res.kept = append(res.kept, b)
			res.notes = append(res.notes, b.Notes...)
			for _, r := range roots(b) {
				included[r] = true
			}
			for _, d := range b.Reached() {
				res.reached[d] = true
			}
			for _, f := range b.Read {
				res.read[f] = true
			}
		}
	}
	for _, c := range components {
		if !included[c.Dir] {
			res.notes = append(res.notes, kube.SafePath(c.File)+": a kustomize Component that no kustomization here includes: not read on its own")
		}
	}
	slices.SortFunc(res.kept, func(a, b *kbuild.Build) int { return cmp.Compare(a.File, b.File) })
	return res
}

// roots are the directories of the kustomization files b read: itself,
// its bases and components.
func roots(b *kbuild.Build) []string {
	var out []string
	for _, f := range b.Read {
		if kbuild.IsKustomization(filepath.Base(f)) {
			out = append(out, filepath.Dir(f))
		}
	}
	return out
}

// merge returns the items of plain (in file order) and of the builds, in
// the order of their files: a build sits where its kustomization file
// does.
func merge(plain *Resources, kept []*kbuild.Build) []*yaml.RNode {
	out := make([]*yaml.RNode, 0, len(plain.Items))
	items := plain.Items
	for _, b := range kept {
		at := filepath.ToSlash(b.File)
		i := 0
		for i < len(items) && fileOf(items[i]) < at {
			i++
		}
		out = append(append(out, items[:i]...), b.Items...)
		items = items[i:]
	}
	return append(out, items...)
}

// fileOf is item's path annotation.
func fileOf(item *yaml.RNode) string {
	p, _ := kube.FileOf(item)
	return p
}

// certFiles lists the certificate files no build read, with the digest of
// each (seen: by abs's keys).
func (s *Resources) certFiles(files fileSystem, certs []string, read, seen map[string]bool, abs *absPaths) {
	for _, f := range certs {
		key := abs.key(f)
		if read[f] || seen[key] {
			continue
		}
		seen[key] = true
		data, err := files.ReadFile(f)
		if err != nil {
			s.problemf("%v", err)
			continue
		}
		sum := sha256.Sum256(data)
		s.CertFiles = append(s.CertFiles, CertFile{Path: filepath.ToSlash(f), SHA256: hex.EncodeToString(sum[:])})
	}
}
