package resio

import (
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// treeState is what writing a package tree back needs: the text of every
// file read, by its path relative to the directory (slash-separated), each
// item's file and fingerprint as read, and each file's resources summed up
// as read (filesOf). It is read-only once ReadTree returns, so that the
// packages of one tree can be written back (WriteFiles) in parallel; each
// fingerprint is taken with seed, so that one taken later compares with
// those taken as read.
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
// error naming it.
func ReadTree(dir string) (*Resources, error) {
	found := Walk(dir, Manifests)
	if len(found.Problems) > 0 {
		return nil, errors.Join(found.Problems...)
	}
	t := &Resources{tree: &treeState{files: make(map[string][]byte, len(found.Files)), seed: maphash.MakeSeed()}}
	dp := newDocumentParser()
	for _, f := range found.Files {
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			return nil, err
		}
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		nodes, err := readNodes(data, rel, dp)
		if err != nil {
			if isTemplate(data) {
				t.Notes = append(t.Notes, templateNote(f))
				continue
			}
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		t.Items = append(t.Items, nodes...)
		t.tree.files[rel] = data
	}
	t.tree.read = t.tree.states(t.Items, true)
	// Once for the tree: summing every file at each package's write made
	// a render of many packages grow with their square.
	t.tree.before = filesOf(t.Items, t.tree.read)
	return t, nil
}
