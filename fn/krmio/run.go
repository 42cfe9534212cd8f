package krmio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Func is a KRM function over already-parsed items: it returns the output
// items (edited in place, plus any new ones), its results, and an error
// when the run failed (then out is expected to be empty). positions[i] is
// the index of items[i] in the input list, which counts the items passed
// through unparsed: messages that name an item by position use it.
type Func func(fnConfig *yaml.RNode, items []*yaml.RNode, positions []int) (out []*yaml.RNode, results framework.Results, err error)

// Needs reports whether the function must see items of this apiVersion and
// kind. Items it does not need are never parsed; they pass through byte for
// byte.
type Needs func(apiVersion, kind string) bool

// parsedItem is an item the fast path parsed.
type parsedItem struct {
	doc  *yaml.Node // the one-entry sequence document the chunk parses to
	node *yaml.RNode
	sum  uint64 // fingerprint of doc before the function ran
	keys int    // countParsedKeys(doc) before the function ran
}

// Run executes fn on the ResourceList in input and writes the output
// ResourceList to w. It returns handled=false (having written nothing)
// when input is not in the canonical layout, with an error wrapping
// ErrNotCanonical that says why; the caller then uses kyaml's reader.
// fnErr is the function's own error, returned after the output (results)
// has been written, as framework.Execute does.
func Run(input []byte, w io.Writer, needs Needs, fn Func) (handled bool, fnErr error) {
	lt, err := split(input)
	if err != nil {
		return false, err
	}
	fnConfig, err := parseFunctionConfig(lt.functionConfig)
	if err != nil {
		return false, fmt.Errorf("%w: functionConfig does not parse alone: %v", ErrNotCanonical, err)
	}
	parsed := make([]*parsedItem, len(lt.items))
	var items, annotated []*yaml.RNode
	var positions []int
	for i, c := range lt.items {
		if !mustParse(c, needs) {
			continue
		}
		p, err := parseChunk(c.raw)
		if err != nil {
			return false, fmt.Errorf("%w: item %d does not parse alone: %v", ErrNotCanonical, i, err)
		}
		parsed[i] = p
		items = append(items, p.node)
		positions = append(positions, i)
		if hasFileAnnotations(c.raw) {
			annotated = append(annotated, p.node)
		}
	}

	// The annotation bookkeeping framework.Execute does on every item
	// (copying legacy and internal path/index/id annotations both ways), done
	// on the items that carry such annotations: on the others it is a no-op.
	// An entry with no annotations stands for those, so that the format
	// kyaml infers for new items is the one it infers from the whole list.
	annos, err := kio.PreprocessResourcesForInternalAnnotationMigration(annotated)
	if err != nil {
		return true, err
	}
	if len(annotated) < len(lt.items) {
		annos["rotate-certs/unannotated"] = map[string]string{}
	}
	out, results, fnErr := fn(fnConfig, items, positions)
	if err := kio.ReconcileInternalAnnotations(reconcileSet(out, annotated, items), annos); err != nil {
		return true, err
	}
	if fnErr != nil {
		// All or nothing: a failed run outputs no items, not even the ones
		// it never parsed.
		lt.items, parsed, out = nil, nil, nil
	}
	if err := write(w, lt, parsed, out, fnConfig, results); err != nil {
		return true, errors.Join(fnErr, err)
	}
	return true, fnErr
}

func mustParse(c chunk, needs Needs) bool {
	return c.kind == "" || c.apiVersion == "" || needs(c.apiVersion, c.kind) ||
		hasFileAnnotations(c.raw) || bytes.Contains(c.raw, []byte("{}")) || mayAlias(c.raw)
}

// hasFileAnnotations reports whether raw may carry the path, index or id
// annotations that kyaml keeps in sync between their internal and legacy
// forms.
func hasFileAnnotations(raw []byte) bool {
	return bytes.Contains(raw, []byte("config.kubernetes.io/")) || bytes.Contains(raw, []byte("config.k8s.io/"))
}

// reconcileSet is the output items kyaml's annotation reconciliation must
// see: the annotated input items and every item the function added.
func reconcileSet(out, annotated, input []*yaml.RNode) []*yaml.RNode {
	known := make(map[*yaml.Node]bool, len(input))
	for _, n := range input {
		known[n.YNode()] = true
	}
	isAnnotated := make(map[*yaml.Node]bool, len(annotated))
	for _, n := range annotated {
		isAnnotated[n.YNode()] = true
	}
	var set []*yaml.RNode
	for _, n := range out {
		if isAnnotated[n.YNode()] || !known[n.YNode()] {
			set = append(set, n)
		}
	}
	return set
}

func parseChunk(raw []byte) (*parsedItem, error) {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(&doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, ErrNotCanonical
	}
	seq := doc.Content[0]
	if seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 || seq.Content[0].Kind != yaml.MappingNode {
		return nil, ErrNotCanonical
	}
	return &parsedItem{doc: &doc, node: yaml.NewRNode(seq.Content[0]), sum: fingerprint(&doc), keys: countParsedKeys(&doc)}, nil
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

// write streams the output ResourceList in kyaml's layout: apiVersion,
// kind, items, functionConfig, results.
func write(w io.Writer, lt *listText, parsed []*parsedItem, out []*yaml.RNode, fnConfig *yaml.RNode, results framework.Results) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "apiVersion: %s\nkind: %s\n", lt.apiVersion, lt.kind)
	// Items the function never parsed are part of the output too: the list
	// is empty only when the function returned nothing and no item passed
	// through unparsed.
	if len(out) == 0 && !hasUnparsed(parsed) {
		bw.WriteString("items: []\n")
	} else {
		bw.WriteString("items:\n")
		inOutput := make(map[*yaml.Node]bool, len(out))
		for _, n := range out {
			inOutput[n.YNode()] = true
		}
		seen := make(map[*yaml.Node]bool, len(out))
		for i, c := range lt.items {
			p := parsed[i]
			if p == nil {
				bw.Write(c.raw)
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
			if fingerprint(p.doc) == p.sum {
				bw.Write(c.raw)
				continue
			}
			if text, ok := splice(c.raw, p.doc, p.keys); ok {
				bw.Write(text)
				continue
			}
			if err := encode(bw, p.doc); err != nil {
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
			doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.SequenceNode, Content: []*yaml.Node{n.YNode()}}}}
			if err := encode(bw, doc); err != nil {
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

// hasUnparsed reports whether any item was passed through without being
// parsed (a nil entry in parsed).
func hasUnparsed(parsed []*parsedItem) bool {
	for _, p := range parsed {
		if p == nil {
			return true
		}
	}
	return false
}

func encode(w io.Writer, doc *yaml.Node) error {
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

// fingerprint hashes everything about a node tree that encoding shows:
// kinds, tags, styles, values, anchors and comments (not line numbers). It
// is FNV-1a written out so that hashing allocates nothing.
func fingerprint(n *yaml.Node) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	mix := func(b byte) { h = (h ^ uint64(b)) * prime }
	str := func(s string) {
		for i := 0; i < len(s); i++ {
			mix(s[i])
		}
		mix(0)
	}
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		mix(byte(n.Kind))
		mix(byte(n.Style))
		str(n.Tag)
		str(n.Value)
		str(n.Anchor)
		str(n.HeadComment)
		str(n.LineComment)
		str(n.FootComment)
		if n.Alias != nil {
			mix('*')
		}
		mix(byte(len(n.Content)))
		mix(byte(len(n.Content) >> 8))
		for _, c := range n.Content {
			walk(c)
		}
		mix(0xff)
	}
	walk(n)
	return h
}
