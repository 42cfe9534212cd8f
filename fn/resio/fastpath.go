package resio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"hash/maphash"
	"io"
	"slices"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Func is a KRM function over already-parsed items: it returns the output
// items (edited in place, plus any new ones), its results, and an error
// when the run failed (then out is expected to be empty). positions[i] is
// the index of items[i] in the input list, which counts the items passed
// through unparsed: messages that name an item by position use it.
type Func func(fnConfig *yaml.RNode, items []*yaml.RNode, positions []int) (out []*yaml.RNode, results framework.Results, err error)

// Needs says which items the function reads, given its functionConfig
// (nil when the list has none).
type Needs func(fnConfig *yaml.RNode) Selection

// Selection is which items of a list the function reads (rotate.Needs
// makes it from the steps' read plan, kube.ReadPlan). Items it does not
// read are passed through as text; the function never sees them.
type Selection struct {
	// Kind reports whether the function may read items of this apiVersion
	// and kind. Items of other kinds are never parsed.
	Kind func(apiVersion, kind string) bool
	// Item reports whether the function reads an item of such a kind, once
	// parsed; nil means it reads every one. An item it does not read is
	// dropped again, so that its nodes do not stay in memory for the run.
	Item func(item *yaml.RNode) bool
}

// parsedItem is an item the fast path parsed.
type parsedItem struct {
	root  *yaml.Node // the item's mapping
	node  *yaml.RNode
	sum   uint64 // fingerprint of root before the function ran
	keys  int    // countParsedKeys(root) before the function ran
	nodes int    // nodes under root
	// cutLine is the line (from 1) of the chunk that the output leaves
	// out, the migration id annotation whose node was taken out of root
	// after parsing; 0 for none.
	cutLine int
	// synced holds the item's synced annotations before the function ran
	// (fileKeys order), for an item whose bookkeeping the fast path does
	// itself; nil for none.
	synced []string
}

// RunFast is the fast path of RunList alone: it runs fn on the
// ResourceList in input and writes the output ResourceList to w. It
// returns handled=false (having written nothing) when input is not in the
// canonical layout, with an error wrapping ErrNotCanonical that says why.
func RunFast(input []byte, w io.Writer, needs Needs, fn Func) (handled bool, fnErr error) {
	res, handled, err := readFast(input, needs)
	if err != nil {
		return handled, err
	}
	out, results, fnErr := fn(res.functionConfig(), res.Items, res.positions)
	return true, res.writeList(w, out, results, fnErr)
}

// readFast reads a canonical ResourceList (see the package comment): an
// item is parsed when the function needs its kind, when its text is not a
// plain block mapping, when it may hold an anchor, or when kyaml's
// annotation bookkeeping could change it in a way this package does not
// reproduce on the text. The bookkeeping framework.Execute does on every
// item (its path, index and id annotations copied between their internal
// and legacy forms, the format of new items inferred from the list, a
// migration id set and deleted) is done on the text for every other item:
// for the lists kpt and kustomize send, that is deleting one line. handled
// is false when input is not in the canonical layout (the error wraps
// ErrNotCanonical and says why). It does not modify input.
func readFast(input []byte, needs Needs) (res *Resources, handled bool, err error) {
	if bytes.Contains(input, []byte("\r\n")) {
		// kyaml's reader turns CRLF into LF before anything else; so does
		// the fast path (a lone CR still goes to kyaml).
		input = bytes.ReplaceAll(input, []byte("\r\n"), []byte("\n"))
	}
	lt, err := split(input)
	if err != nil {
		return nil, false, err
	}
	fnConfig, err := parseFunctionConfig(lt.functionConfig)
	if err != nil {
		return nil, false, fmt.Errorf("%w: functionConfig does not parse alone: %v", ErrNotCanonical, err)
	}
	r := &listReader{
		lt: lt, reads: needs(fnConfig), ip: newItemParser(), budget: parseBudget(len(input)),
		cuts: make([]cut, len(lt.items)), parsed: make([]*parsedItem, len(lt.items)),
		patterns: map[pattern]bool{}, types: map[string]string{}, size: len(input),
	}
	r.gc = startCollector()
	r.gc.parsing(keptEstimate(len(input), len(lt.items), 0))
	for i := range lt.items {
		if handled, err := r.item(i); err != nil {
			r.gc.stop()
			return nil, handled, err
		}
	}
	r.gc.parsed(keptEstimate(r.size, len(lt.items), r.kept))
	// kyaml's bookkeeping on the items the fast path left to it; every
	// other item stands in its format inference by its pattern.
	r.annos, err = kio.PreprocessResourcesForInternalAnnotationMigration(r.kyamlItems)
	if err != nil {
		r.gc.stop()
		return nil, true, err
	}
	for p := range r.patterns {
		r.annos["rotate-certs/pattern-"+strconv.Itoa(int(p))] = p.annotations()
	}
	res = &Resources{Items: r.items, positions: r.positions, list: r}
	if fnConfig != nil {
		res.FunctionConfigs = []*yaml.RNode{fnConfig}
	}
	return res, true, nil
}

// write writes the output of the function over the list r read.
func (r *listReader) write(w io.Writer, fnConfig *yaml.RNode, out []*yaml.RNode, results framework.Results, fnErr error) error {
	defer r.gc.stop()
	lt, parsed := r.lt, r.parsed
	set, err := reconcileSet(out, r.kyamlItems, parsed, r.annos)
	if err != nil {
		return err
	}
	if err := kio.ReconcileInternalAnnotations(set, r.annos); err != nil {
		return err
	}
	if fnErr != nil {
		// All or nothing: a failed run outputs no items, not even the ones
		// it never parsed.
		lt.items, parsed, out = nil, nil, nil
	}
	if err := writeList(w, &r.ip.fingerprinter, lt, r.cuts, parsed, out, fnConfig, results); err != nil {
		return errors.Join(fnErr, err)
	}
	return fnErr
}

// listReader holds what readFast learns of a list's items as it reads
// them: which pass through as text (and the line each loses), which are
// parsed and handed to the function, and which keep kyaml's own books
// (annos: what kyaml's bookkeeping recorded before the function ran).
type listReader struct {
	lt       *listText
	reads    Selection
	ip       *itemParser
	gc       *collector
	size     int // of the input, in bytes
	budget   int // nodes the kept items may hold
	kept     int // nodes of the items parsed and kept
	cuts     []cut
	parsed   []*parsedItem
	patterns map[pattern]bool
	types    map[string]string // apiVersions and kinds, interned

	items, kyamlItems []*yaml.RNode
	positions         []int
	annos             map[string]map[string]string
}

func (r *listReader) intern(b []byte) string {
	if s, ok := r.types[string(b)]; ok {
		return s
	}
	s := string(b)
	r.types[s] = s
	return s
}

// item reads item i: as text when no step needs it and its text is
// plain, else parsed (and dropped again when no step reads it after all).
// An error ends the run; handled says whether Run has taken the input.
func (r *listReader) item(i int) (handled bool, err error) {
	raw := r.lt.raw(i)
	t := readItem(raw, r.intern)
	// A migration id the text reading did not find (in a flow mapping, or
	// in an item it does not read that far) is kyaml's to delete, from
	// the tree: such an item keeps kyaml's books and is not passed as text
	// (found by FuzzFastPathMatchesKyaml).
	unmarked := t.cutEnd == 0 && bytes.Contains(raw, []byte(migrationID))
	asText := t.object && t.synced && !mayAlias(raw) && !unmarked
	if asText && !t.needed(r.reads.Kind) {
		// Passed through as text: kyaml's bookkeeping only deletes the
		// migration id line.
		r.passAsText(i, t)
		return true, nil
	}
	// The fast path keeps the books of an item whose synced annotations
	// come in pairs, and of one without any (kyaml's bookkeeping is a
	// no-op on it); kyaml keeps the others'.
	own := t.synced && (t.pattern == 0 || t.pattern.internal() && t.pattern.paired()) || !hasSyncedText(raw)
	own = own && !unmarked
	if est := estimateNodes(raw); r.kept+est > r.budget {
		return true, &TooMuchYAMLError{Size: r.size, Item: i, Nodes: r.kept + est, Budget: r.budget}
	}
	mark := r.ip.block.mark()
	p, err := r.ip.parseTree(raw)
	if err != nil {
		return false, fmt.Errorf("%w: item %d does not parse alone: %v", ErrNotCanonical, i, err)
	}
	// The fast path also keeps the books of an item whose metadata, labels
	// or annotations are not mappings, which the function refuses: kyaml's
	// bookkeeping sets an annotation on every item it keeps the books of,
	// which replaces annotations that are not a mapping, and what they
	// held, before the function sees them, and fails naming no item on
	// metadata that is not one (found by FuzzFastPathMatchesKyaml:
	// "internal.config.kubernetes.io/path:x" under annotations, with no
	// space after the colon, is a string).
	if own = own || kube.CheckShape(p.node, "") != nil; own {
		if err := p.keepBooks(raw, t); err != nil {
			return false, fmt.Errorf("%w: item %d %v", ErrNotCanonical, i, err)
		}
	}
	if !r.reads.wants(p.node) && (asText || passable(p.node, raw)) && !unmarked {
		// Parsed to learn what it is, and not read after all.
		r.ip.block.rewind(mark) // its nodes are the next item's
		r.passAsText(i, t)
		return true, nil
	}
	r.ip.fingerprint(p) // once, of the tree as the function receives it
	r.kept += p.nodes
	if i%1024 == 0 {
		r.gc.parsing(keptEstimate(r.size, len(r.lt.items), r.kept))
	}
	if own {
		if p.cutLine > 0 {
			r.cuts[i] = cut{uint32(t.cutStart), uint32(t.cutEnd)}
		}
		r.patterns[t.pattern] = true
	} else {
		r.kyamlItems = append(r.kyamlItems, p.node)
	}
	r.parsed[i] = p
	r.items = append(r.items, p.node)
	r.positions = append(r.positions, i)
	return true, nil
}

// passAsText records item i as passed through as its text.
func (r *listReader) passAsText(i int, t itemText) {
	r.patterns[t.pattern] = true
	r.cuts[i] = cut{uint32(t.cutStart), uint32(t.cutEnd)}
}

// cut is a line of an item's text, as offsets into it, that the output
// leaves out; end 0 for none.
type cut struct{ start, end uint32 }

// reconcileSet is the output items kyaml's annotation reconciliation must
// see: the items handed to its bookkeeping, every item the function added,
// and any item whose path or index annotations the function changed (it
// never does; kyaml would copy the change to the other form).
func reconcileSet(out, kyamlItems []*yaml.RNode, parsed []*parsedItem, annos map[string]map[string]string) ([]*yaml.RNode, error) {
	known := make(map[*yaml.Node]*parsedItem, len(parsed))
	for _, p := range parsed {
		if p != nil {
			known[p.node.YNode()] = p
		}
	}
	toKyaml := make(map[*yaml.Node]bool, len(kyamlItems))
	for _, n := range kyamlItems {
		toKyaml[n.YNode()] = true
	}
	var set []*yaml.RNode
	for _, n := range out {
		p, ok := known[n.YNode()]
		switch {
		case toKyaml[n.YNode()] || !ok:
			set = append(set, n)
		case !slices.Equal(p.synced, syncedValues(n)):
			// Hand the change to kyaml with what it would have recorded
			// before the function ran.
			id := fmt.Sprintf("rotate-certs/changed-%d", len(set))
			before := map[string]string{}
			for i, k := range fileKeys {
				if p.synced != nil && p.synced[i] != "" {
					before[k] = p.synced[i]
				}
			}
			annos[id] = before
			if err := n.PipeE(yaml.SetAnnotation(kioutil.InternalAnnotationsMigrationResourceIDAnnotation, id)); err != nil {
				return nil, err
			}
			set = append(set, n)
		}
	}
	return set, nil
}

// syncedValues returns the item's synced annotations in fileKeys order
// ("" for absent), read from the node without decoding its metadata.
func syncedValues(n *yaml.RNode) []string {
	var out []string
	annos := annotationsNode(n)
	if annos == nil {
		return nil
	}
	c := annos.Content
	for i := 0; i+1 < len(c); i += 2 {
		for j, k := range fileKeys {
			if c[i].Value != k {
				continue
			}
			if out == nil {
				out = make([]string, len(fileKeys))
			}
			if out[j] == "" {
				out[j] = c[i+1].Value
			}
		}
	}
	return out
}

// annotationsNode returns the item's metadata.annotations mapping, or nil.
func annotationsNode(n *yaml.RNode) *yaml.Node {
	annos := kube.MapValue(kube.MapValue(n.YNode(), "metadata"), "annotations")
	if annos == nil || annos.Kind != yaml.MappingNode {
		return nil
	}
	return annos
}

// deleteAnnotation removes key from the item's annotations and reports
// whether it was there.
func deleteAnnotation(n *yaml.RNode, key string) bool {
	annos := annotationsNode(n)
	if annos == nil {
		return false
	}
	for i := 0; i+1 < len(annos.Content); i += 2 {
		if annos.Content[i].Value == key {
			annos.Content = append(annos.Content[:i], annos.Content[i+2:]...)
			return true
		}
	}
	return false
}

// keepBooks does kyaml's bookkeeping on an item the fast path keeps the
// books of, parsed from raw, before its fingerprint is taken: the
// migration id annotation its text holds is taken out of the tree and its
// line out of the output, and its synced annotations are recorded.
func (p *parsedItem) keepBooks(raw []byte, t itemText) error {
	if t.cutEnd > 0 {
		if !deleteAnnotation(p.node, migrationID) {
			return errors.New("holds the migration id annotation in a form its text does not show")
		}
		p.cutLine = 1 + bytes.Count(raw[:t.cutStart], []byte("\n"))
	}
	p.synced = syncedValues(p.node)
	return nil
}

// fingerprint records the fingerprint, the keys and the nodes of p's tree
// as it is now: what write compares the function's output with.
func (ip *itemParser) fingerprint(p *parsedItem) {
	p.sum, p.keys, p.nodes = ip.sum(p.root), countParsedKeys(p.root), ip.nodes
}

// itemParser parses the items of one run: with the block parser, and with
// yaml.v3 what the block parser declines.
type itemParser struct {
	fingerprinter
	block *blockParser
}

func newItemParser() *itemParser { return &itemParser{block: newBlockParser()} }

// parseTree parses an item's chunk: with the block parser, or with
// yaml.v3 when the block parser declines it.
func (ip *itemParser) parseTree(raw []byte) (*parsedItem, error) {
	root := ip.block.parse(raw)
	if root == nil {
		var doc yaml.Node
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
		if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
			return nil, ErrNotCanonical
		}
		seq := doc.Content[0]
		if seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 {
			return nil, ErrNotCanonical
		}
		root = seq.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, ErrNotCanonical
	}
	return &parsedItem{root: root, node: yaml.NewRNode(root)}, nil
}

func parseFunctionConfig(text []byte) (*yaml.RNode, error) {
	if len(text) == 0 {
		return nil, nil
	}
	n, err := yaml.Parse(string(text))
	if err != nil {
		return nil, err
	}
	fc := n.Field("functionConfig")
	if fc == nil {
		return nil, ErrNotCanonical
	}
	return fc.Value, nil
}

// writeList streams the output ResourceList in kyaml's layout: apiVersion,
// kind, items, functionConfig, results.
func writeList(w io.Writer, fp *fingerprinter, lt *listText, cuts []cut, parsed []*parsedItem, out []*yaml.RNode, fnConfig *yaml.RNode, results framework.Results) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "apiVersion: %s\nkind: %s\n", lt.apiVersion, lt.kind)
	// Items the function never parsed (nil in parsed) are part of the
	// output too: the list is empty only when the function returned nothing
	// and no item passed through unparsed.
	if len(out) == 0 && !slices.Contains(parsed, nil) {
		bw.WriteString("items: []\n")
	} else {
		bw.WriteString("items:\n")
		inOutput := make(map[*yaml.Node]bool, len(out))
		for _, n := range out {
			inOutput[n.YNode()] = true
		}
		seen := make(map[*yaml.Node]bool, len(out))
		pairs := &pairCache{fp: fp}
		for i := range lt.items {
			raw, c := lt.raw(i), cuts[i]
			p := parsed[i]
			if p == nil {
				writeCut(bw, raw, c)
				continue
			}
			if !inOutput[p.node.YNode()] {
				continue // removed by the function
			}
			seen[p.node.YNode()] = true
			// kyaml's writer drops empty annotations and metadata.
			if err := yaml.ClearEmptyAnnotations(p.node); err != nil {
				return err
			}
			if fp.sum(p.root) == p.sum {
				writeCut(bw, raw, c)
				continue
			}
			if text, ok := splice(raw, p.root, p.keys, p.cutLine, pairs); ok {
				bw.Write(text)
				continue
			}
			if err := encode(bw, p.root); err != nil {
				return err
			}
		}
		for _, n := range out {
			if seen[n.YNode()] {
				continue
			}
			if err := yaml.ClearEmptyAnnotations(n); err != nil {
				return err
			}
			if err := encode(bw, n.YNode()); err != nil {
				return err
			}
		}
	}
	if fnConfig != nil {
		bw.Write(lt.functionConfig)
	}
	if len(results) > 0 {
		if err := writeResults(bw, results); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeCut writes raw without the line c.
func writeCut(w *bufio.Writer, raw []byte, c cut) {
	if c.end == 0 {
		w.Write(raw)
		return
	}
	w.Write(raw[:c.start])
	w.Write(raw[c.end:])
}

// encode writes item as an entry of the items list.
func encode(w io.Writer, item *yaml.Node) error {
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.SequenceNode, Content: []*yaml.Node{item}}}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// fingerprinter hashes everything about a node tree that encoding shows -
// kinds, tags, styles, values, anchors, comments and order, not line
// numbers - with one seed for the whole run: two trees with one
// fingerprint encode alike. It is the one fingerprint of this package
// (lists, trees, encoded pairs).
type fingerprinter struct {
	h     maphash.Hash
	nodes int // in the tree last summed
}

func (f *fingerprinter) sum(n *yaml.Node) uint64 {
	f.h.Reset()
	f.nodes = hashTree(&f.h, n)
	return f.h.Sum64()
}

// hashTree writes n and everything under it to h and returns the number
// of nodes.
func hashTree(h *maphash.Hash, n *yaml.Node) int {
	str := func(s string) {
		h.WriteString(s)
		h.WriteByte(0)
	}
	h.WriteByte(byte(n.Kind))
	h.WriteByte(byte(n.Style))
	str(n.Tag)
	str(n.Value)
	str(n.Anchor)
	if n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" {
		h.WriteByte('#')
		str(n.HeadComment)
		str(n.LineComment)
		str(n.FootComment)
	}
	if n.Alias != nil {
		h.WriteByte('*')
	}
	h.WriteByte(byte(len(n.Content)))
	h.WriteByte(byte(len(n.Content) >> 8))
	nodes := 1
	for _, c := range n.Content {
		nodes += hashTree(h, c)
	}
	h.WriteByte(0xff)
	return nodes
}
