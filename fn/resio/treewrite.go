package resio

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/atomicfs"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readState is an item's file and the fingerprint of its nodes, at one
// point of a render (as read, or after the function ran), and as read the
// count of its parsed keys (countParsedKeys), which the splice of a
// changed resource checks.
type readState struct {
	path string
	sum  uint64
	keys int
}

// states returns each item's file and fingerprint, by node, and with keys
// its count of parsed keys.
func (t *treeState) states(items []*yaml.RNode, keys bool) map[*yaml.Node]readState {
	var fp fingerprinter
	fp.h.SetSeed(t.seed)
	out := make(map[*yaml.Node]readState, len(items))
	for _, item := range items {
		r := readState{path: filePath(item), sum: fp.sum(item.YNode())}
		if keys {
			r.keys = countParsedKeys(item.YNode())
		}
		out[item.YNode()] = r
	}
	return out
}

func filePath(item *yaml.RNode) string {
	return item.GetAnnotations(kioutil.PathAnnotation)[kioutil.PathAnnotation]
}

// CheckDuplicateKeys fails on the first file of items (read by ReadTree
// from dir) in which a mapping defines a key twice (two manifests without
// "---" between them): kyaml keeps the first value silently, so the
// function would render what the file does not say. kubectl rejects such
// a file too.
func (r *Resources) CheckDuplicateKeys(dir string, items []*yaml.RNode) error {
	for _, item := range items {
		if !kube.HasDuplicateKeys(item) {
			continue
		}
		file := filepath.Join(dir, filepath.FromSlash(filePath(item)))
		return errors.New(duplicateKeysMessage(file, duplicateKeys(r.tree.files[filePath(item)])))
	}
	return nil
}

// WriteFiles returns the files to write back after a function ran over
// items of a tree ReadTree read, out being its output: only the files
// whose resources changed (a file the function did not change keeps its
// bytes), and in those the documents whose resources did not change keep
// their text (keepUnchangedDocuments). A new item goes where its path
// annotation says, after the others of its file. Paths are relative to
// the directory read. Its cost is out's, whatever the size of the tree,
// and it may run for several packages (distinct out) at once: it changes
// nothing but out.
func (r *Resources) WriteFiles(out []*yaml.RNode) ([]atomicfs.File, error) {
	t := r.tree
	if err := defaultPathAndIndex(out); err != nil {
		return nil, err
	}
	now := t.states(out, false)
	after := filesOf(out, now)
	byFile := map[string][]*yaml.RNode{} // each changed file's items
	for _, item := range out {
		if p := now[item.YNode()].path; after[p] != t.before[p] {
			byFile[p] = append(byFile[p], item)
		}
	}
	var files []atomicfs.File
	for p, inFile := range byFile {
		b, err := t.keepUnchangedDocuments(p, inFile, now)
		if err != nil {
			return nil, err
		}
		if b == nil {
			if b, err = encodeFile(p, inFile...); err != nil {
				return nil, err
			}
		}
		files = append(files, atomicfs.File{Path: p, Data: b})
	}
	return files, nil
}

// filesOf sums items up file by file from their fingerprints (sums), so
// that a writer can tell which files the function changed: a file changed
// when one of its resources did (anything its encoding shows: values,
// styles, comments, order), or when a resource was added to it.
// Fingerprints, not encodings: encoding every file twice cost render more
// than reading and rendering the package.
func filesOf(items []*yaml.RNode, sums map[*yaml.Node]readState) map[string]string {
	byFile := map[string][]uint64{}
	for _, item := range items {
		r := sums[item.YNode()]
		byFile[r.path] = append(byFile[r.path], r.sum)
	}
	files := make(map[string]string, len(byFile))
	for path, s := range byFile {
		slices.Sort(s) // the writer orders a file's resources by their index
		files[path] = fmt.Sprint(s)
	}
	return files
}

// keepUnchangedDocuments returns the new text of the package file path
// (slash-separated), whose resources changed, from the text it was read
// from, keeping the text of every document whose resource did not change:
// the function manages only its own resources, and re-encoding another
// one is not always stable (spliceDocuments). now holds each item's
// fingerprint after the function ran. inFile are the items placed in the
// file; it is sorted in place. It returns nil, and the caller encodes the
// whole file, when the file is new or its documents cannot be matched
// with the items read from it.
func (t *treeState) keepUnchangedDocuments(path string, inFile []*yaml.RNode, now map[*yaml.Node]readState) ([]byte, error) {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".yaml" && ext != ".yml" {
		return nil, nil
	}
	if err := sortByIndex(inFile); err != nil {
		return nil, err
	}
	original, ok := t.files[path]
	if !ok {
		return nil, nil // a new file
	}
	old := t.readFrom(path, inFile)
	if old < 0 {
		return nil, nil
	}
	// Only the resources that changed, and the new ones, are encoded.
	var encodeErr error
	encode := func(item *yaml.RNode) string {
		text, err := encodeFile(filePath(item), item)
		if err != nil && encodeErr == nil {
			encodeErr = err
		}
		return string(text)
	}
	var appended []string
	for _, item := range inFile[old:] {
		appended = append(appended, encode(item))
	}
	out, n, ok := spliceDocuments(original, func(k int, doc string) (string, bool) {
		if k >= old {
			return "", false
		}
		node := inFile[k].YNode()
		if now[node].sum == t.read[node].sum {
			return "", false
		}
		if text, ok := spliceItem(inFile[k], doc, t.read[node].keys); ok {
			return text, true
		}
		return encode(inFile[k]), true
	}, appended)
	if encodeErr != nil {
		return nil, encodeErr
	}
	if !ok || n != old {
		return nil, nil
	}
	return out, nil
}

// readFrom returns how many of inFile were read from the file path: they
// come first, in file order; -1 when they do not.
func (t *treeState) readFrom(path string, inFile []*yaml.RNode) int {
	fromFile := func(item *yaml.RNode) bool {
		r, ok := t.read[item.YNode()]
		return ok && r.path == path
	}
	old := 0
	for old < len(inFile) && fromFile(inFile[old]) {
		old++
	}
	for i, item := range inFile {
		if fromFile(item) != (i < old) {
			return -1 // out of order
		}
	}
	return old
}

// spliceItem is encodeFile for a resource the function changed, read from
// the document doc: the pairs it did not change keep their text as
// written, and only those it replaced or added are encoded (splice). ok is
// false where the splice does not follow the change, or the file's
// sequences are indented (the splice encodes them compact, as kyaml does
// by default); encode the item then.
func spliceItem(item *yaml.RNode, doc string, parsedKeys int) (string, bool) {
	if item.GetAnnotations(kioutil.SeqIndentAnnotation)[kioutil.SeqIndentAnnotation] == string(yaml.WideSequenceStyle) {
		return "", false
	}
	// What kyaml's writer takes off before it writes (encodeFile), on a
	// copy: the items are read again if the file is encoded whole.
	c := item.Copy()
	for _, a := range []string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation, kioutil.SeqIndentAnnotation,
		kioutil.PathAnnotation, kioutil.LegacyPathAnnotation} {
		if _, err := c.Pipe(yaml.ClearAnnotation(a)); err != nil {
			return "", false
		}
	}
	if err := yaml.ClearEmptyAnnotations(c); err != nil {
		return "", false
	}
	text, ok := splice([]byte(doc), c.YNode(), parsedKeys, 0, nil)
	return string(text), ok
}

// encodeFile returns the text of package file path as kyaml's writer
// writes it (on copies): items, the items placed in it, in index order -
// or one changed resource of it.
func encodeFile(path string, items ...*yaml.RNode) ([]byte, error) {
	var b bytes.Buffer
	w := kio.ByteWriter{Writer: &b, Sort: true, ClearAnnotations: []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation}}
	if err := w.Write(items); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b.Bytes(), nil
}

// sortByIndex orders one file's items as kioutil.SortNodes does - by the
// index annotation, those without one first, ties kept in order - reading
// each item's annotation once instead of at every comparison.
func sortByIndex(inFile []*yaml.RNode) error {
	type keyed struct {
		item  *yaml.RNode
		has   bool
		index int
	}
	keys := make([]keyed, len(inFile))
	for i, item := range inFile {
		keys[i] = keyed{item: item}
		v := item.GetAnnotations(kioutil.IndexAnnotation)[kioutil.IndexAnnotation]
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("unable to parse %s %s: %w", kioutil.IndexAnnotation, v, err)
		}
		keys[i].has, keys[i].index = true, n
	}
	slices.SortStableFunc(keys, func(a, b keyed) int {
		switch {
		case !a.has && b.has:
			return -1
		case a.has && !b.has:
			return 1
		}
		return cmp.Compare(a.index, b.index)
	})
	for i, k := range keys {
		inFile[i] = k.item
	}
	return nil
}

// defaultPathAndIndex gives every item a path and an index annotation, in
// both forms, exactly as kioutil.DefaultPathAndIndexAnnotation does, but
// hands it only the items it would change - those missing the path or
// the index, or one form of a pair - and, for each file, the item with
// the highest index among the rest, which is all it reads of them (a new
// item in a file is numbered after it). Reading every item's metadata the
// way it does cost render more than the function's own steps.
func defaultPathAndIndex(items []*yaml.RNode) error {
	var todo []*yaml.RNode
	last := map[string]*yaml.RNode{} // by path, the settled item with the highest index
	lastIndex := map[string]int{}
	for _, item := range items {
		a := item.GetAnnotations(fileKeys[:]...)
		if !settled(a) {
			todo = append(todo, item)
			continue
		}
		p := a[kioutil.PathAnnotation]
		index, _ := strconv.Atoi(a[kioutil.IndexAnnotation])
		if _, seen := last[p]; !seen || index > lastIndex[p] {
			last[p], lastIndex[p] = item, index
		}
	}
	if len(todo) == 0 {
		return nil
	}
	// The settled items handed over keep their annotations; their order
	// does not matter (only the highest index of each file is read).
	handed := make([]*yaml.RNode, 0, len(last)+len(todo))
	for _, item := range last {
		handed = append(handed, item)
	}
	return kioutil.DefaultPathAndIndexAnnotation("", append(handed, todo...))
}

// settled reports whether kioutil.DefaultPathAndIndexAnnotation leaves an
// item with annotations a as it is: it has a path and an index, and of
// each pair of forms (path, index, id) both or neither are set.
func settled(a map[string]string) bool {
	_, path := a[kioutil.PathAnnotation]
	_, index := a[kioutil.IndexAnnotation]
	for j := 0; j < len(fileKeys); j += 2 {
		if (a[fileKeys[j]] == "") != (a[fileKeys[j+1]] == "") {
			return false
		}
	}
	return path && index
}
