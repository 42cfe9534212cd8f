package resio

import (
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"os"
	"path/filepath"

	"github.com/rotate-certs/rotate-certs/fn/parallel"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// treeState is what writing a package tree back needs: the text of every
// file read, by its path relative to the directory (slash-separated), each
// item's file and fingerprint as read, and each file's resources summed up
// as read (filesOf). It is read-only once ReadTree (or Tree.Read) returns,
// so that the packages of one tree can be written back (WriteFiles) in
// parallel; each fingerprint is taken with seed, so that one taken later
// compares with those taken as read.
type treeState struct {
	files  map[string][]byte
	read   map[*yaml.Node]readState
	before map[string]string
	seed   maphash.Seed
}

// ReadTree reads every *.yaml and *.yml file under dir by Walk's
// rules, the way `render` needs them: each resource carries its file's
// path relative to dir (slash-separated, in the internal and the legacy
// annotation), its index in the file and the file's sequence indentation,
// as kyaml's package reader sets them, so that kyaml's writer puts each
// resource back where it was. Lists are not unwrapped: render writes
// files back as they are. A file that is not regular, or that does not
// parse (unless it is a template, which is skipped with a note), is an
// error naming it: the first such file in Walk's order. Files are read
// and parsed on every core; what ReadTree returns is in Walk's order, the
// same whatever the number of cores. It holds the whole tree parsed:
// render reads a tree with ScanTree and Tree.Read, a package at a time.
func ReadTree(dir string) (*Resources, error) {
	state := &treeState{files: map[string][]byte{}, read: map[*yaml.Node]readState{}, seed: maphash.MakeSeed()}
	t := &Resources{tree: state}
	notes, err := readTreeFiles(dir, func(f treeFile) treeFile {
		f.read = state.states(f.nodes, true)
		return f
	}, func(f treeFile) {
		t.Items = append(t.Items, f.nodes...)
		state.files[f.rel] = f.data
		maps.Copy(state.read, f.read)
	})
	if err != nil {
		return nil, err
	}
	t.Notes = notes
	// Once for the tree: summing every file at each package's write made
	// a render of many packages grow with their square.
	state.before = filesOf(t.Items, state.read)
	return t, nil
}

// readTreeFiles reads every file under dir as ReadTree does, on every
// core, each through then on the goroutine that read it; it hands add
// each file that parsed, in Walk's order, and returns the notes of the
// files skipped in that order, or the first error.
func readTreeFiles(dir string, then func(treeFile) treeFile, add func(treeFile)) (notes []string, err error) {
	found := Walk(dir, Manifests)
	if len(found.Problems) > 0 {
		return nil, errors.Join(found.Problems...)
	}
	parallel.Map(len(found.Files), 0, func() func(int) treeFile {
		dp := newDocumentParser()
		return func(i int) treeFile { return then(readTreeFile(dir, found.Files[i], dp)) }
	}, func(_ int, f treeFile) {
		switch {
		case err != nil:
		case f.err != nil:
			err = f.err
		case f.note != "":
			notes = append(notes, f.note)
		default:
			add(f)
		}
	})
	return notes, err
}

// treeFile is one file ReadTree read: its text, its resources and their
// states as read, how many resources it holds (ScanTree keeps only some)
// - or the note that skips it, or the error that fails the read.
type treeFile struct {
	rel       string
	data      []byte
	nodes     []*yaml.RNode
	read      map[*yaml.Node]readState
	resources int
	note      string
	err       error
}

// readTreeFile reads the file f under dir with dp (see ReadTree), without
// the states of its resources.
func readTreeFile(dir, f string, dp *documentParser) treeFile {
	rel, err := filepath.Rel(dir, f)
	if err != nil {
		return treeFile{err: err}
	}
	rel = filepath.ToSlash(rel)
	data, err := os.ReadFile(f)
	if err != nil {
		return treeFile{err: err}
	}
	nodes, err := readNodes(data, rel, dp)
	if err != nil {
		if isTemplate(data) {
			return treeFile{note: templateNote(f)}
		}
		return treeFile{err: fmt.Errorf("%s: %w", f, err)}
	}
	return treeFile{rel: rel, data: data, nodes: nodes, resources: len(nodes)}
}
