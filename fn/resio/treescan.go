package resio

import (
	"fmt"
	"hash/maphash"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Tree is a package tree read a package at a time, so that what a render
// holds is the text of the files, not every resource parsed: ScanTree
// reads and parses every file once - the errors and notes are ReadTree's -
// and keeps the text and the resources the caller asks for (the
// policies, which say where the packages are); Read parses the files of
// one package again into Resources that WriteFiles writes back, as
// ReadTree's would; Release lets a package's text go once it is written.
type Tree struct {
	// Notes are the files skipped (templates that are not YAML).
	Notes []string
	// problems are what ScanPaths found it could not read (ScanTree fails
	// instead); Read finds those of the files it did not parse (InOrder).
	problems []Problem
	// Kept are the resources keep chose, in Walk's order, as ReadTree
	// reads them (path, index and indentation annotations).
	Kept []*yaml.RNode
	// Files are the files read, in Walk's order: those without a
	// resource too (a file a package adds a resource to keeps its text).
	Files []TreeFile

	at   map[string]int // index in Files, by path
	text [][]byte       // by index in Files; nil once released
	seed maphash.Seed
	// paths is true for a tree ScanPaths read: Read parses as ReadPaths;
	// unread are the files (by index) it did not parse, problemAt the
	// index in Files of the file each of Problems came before.
	paths     bool
	unread    map[int]bool
	problemAt []int
	// held are, by index in Files, what ScanBuilt holds built (nil for a
	// file held as text).
	held []*Resources
}

// TreeFile is one file of a Tree.
type TreeFile struct {
	// Path is relative to the tree's directory, slash-separated.
	Path string
	// Resources is how many resources it holds (0 for a file ScanPaths
	// did not parse).
	Resources int
	// Names are the files its resources name (their path annotations),
	// each once, in order, "" for a resource that names none (stdin's):
	// a file of a tree ScanPaths read may hold resources another tool
	// wrote with paths of their own (a ResourceList). Nil for ScanTree's,
	// whose resources all name their file.
	Names []string
}

// ScanTree reads the tree under dir as ReadTree does (the same files, the
// same errors and notes, on every core) and keeps of it only the text of
// each file and the resources keep chooses.
func ScanTree(dir string, keep func(*yaml.RNode) bool) (*Tree, error) {
	t := &Tree{at: map[string]int{}, seed: maphash.MakeSeed()}
	notes, err := readTreeFiles(dir, func(f treeFile) treeFile {
		kept := make([]*yaml.RNode, 0, 1)
		for _, n := range f.nodes {
			if keep(n) {
				kept = append(kept, n)
			}
		}
		f.nodes = kept
		return f
	}, func(f treeFile) {
		t.at[f.rel] = len(t.Files)
		t.Files = append(t.Files, TreeFile{Path: f.rel, Resources: f.resources})
		t.text = append(t.text, f.data)
		t.Kept = append(t.Kept, f.nodes...)
	})
	if err != nil {
		return nil, err
	}
	t.Notes = notes
	return t, nil
}

// Read parses files - paths of t.Files, in Walk's order, not released -
// into what ReadTree would give for a tree of only those files: their
// resources in order, which WriteFiles writes back. Read and Release may
// run at once for distinct sets of files.
//
// For a tree ScanPaths read, Read gives what ReadPaths gives for those
// files, without write-back state.
func (t *Tree) Read(files []string) (*Resources, error) {
	if t.paths {
		return t.readPathFiles(files)
	}
	state := &treeState{files: make(map[string][]byte, len(files)), seed: t.seed}
	r := &Resources{tree: state}
	dp := newDocumentParser()
	for _, rel := range files {
		i, ok := t.at[rel]
		if !ok || t.text[i] == nil {
			return nil, fmt.Errorf("%s: not read, or released", rel)
		}
		data := t.text[i]
		nodes, err := readNodes(data, rel, dp)
		if err != nil { // ScanTree parsed it
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		r.Items = append(r.Items, nodes...)
		state.files[rel] = data
	}
	state.read = state.states(r.Items, true)
	state.before = filesOf(r.Items, state.read)
	return r, nil
}

// Release drops the text of files: Read cannot read them again.
func (t *Tree) Release(files []string) {
	for _, rel := range files {
		if i, ok := t.at[rel]; ok {
			t.text[i] = nil
			if i < len(t.held) {
				t.held[i] = nil
			}
		}
	}
}
