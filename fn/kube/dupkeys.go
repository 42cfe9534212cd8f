package kube

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DuplicateKey is a mapping key defined twice in the same mapping. YAML
// parsers keep one of the two values silently (kyaml keeps the first), so a
// file with one - typically two manifests concatenated without "---" - does
// not say what its author meant. kubectl rejects such files; so do check,
// init, render and function mode.
type DuplicateKey struct {
	// Key is the key as written.
	Key string
	// Field is the dotted path of the key's second definition from the
	// walked node ("data.ca.crt", "spec.containers[0].name").
	Field string
	// Line is the 1-based line of the second definition, FirstLine of the
	// first, both counted from the start of the file (or of what was
	// parsed, for DuplicateKeysOf).
	Line, FirstLine int
	// TopLevel is true when the mapping is a document's root: the usual
	// sign of a missing "---" between two documents.
	TopLevel bool
}

// HasDuplicateKeys reports whether any mapping in nodes defines a key twice.
// It only walks nodes that are already parsed; DuplicateKeysOf and
// DuplicateKeysAt then find the lines in the file.
func HasDuplicateKeys(nodes ...*yaml.RNode) bool {
	for _, n := range nodes {
		if len(DuplicateKeysOf(n)) > 0 {
			return true
		}
	}
	return false
}

// DuplicateKeysOf returns the duplicate mapping keys under node, with their
// field paths, in document order.
func DuplicateKeysOf(node *yaml.RNode) []DuplicateKey {
	return DuplicateKeysAt(node.YNode(), 0)
}

// DuplicateKeysAt returns the duplicate mapping keys under n (a document
// or a node of one), offset being added to their lines: the lines of the
// document before n's text.
func DuplicateKeysAt(n *yaml.Node, offset int) []DuplicateKey {
	w := dupWalker{offset: offset}
	w.walk(n, true)
	return w.found
}

// dupWalker finds duplicate keys; offset is added to the lines. path is the
// field path to the node being walked, built only when a duplicate is
// found.
type dupWalker struct {
	offset int
	found  []DuplicateKey
	path   []pathPart
}

type pathPart struct {
	key   string
	index int // -1 for a mapping key
}

func (w *dupWalker) field(key string) string {
	var b strings.Builder
	for _, p := range w.path {
		if p.index >= 0 {
			fmt.Fprintf(&b, "[%d]", p.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p.key)
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(key)
	return b.String()
}

// smallMapping is the size up to which a mapping's keys are compared pair
// by pair rather than through a map: most mappings are small, and a map
// for each would cost more than the comparisons.
const smallMapping = 16

// walk adds every duplicate key under n to w.found. Aliases are not
// followed: the anchored node is walked where it is defined.
func (w *dupWalker) walk(n *yaml.Node, root bool) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			w.walk(c, true)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			w.path = append(w.path, pathPart{index: i})
			w.walk(c, false)
			w.path = w.path[:len(w.path)-1]
		}
	case yaml.MappingNode:
		var first map[string]int
		if len(n.Content) > 2*smallMapping {
			first = make(map[string]int, len(n.Content)/2)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode {
				if line, dup := w.seen(n.Content, i, first); dup {
					w.found = append(w.found, DuplicateKey{Key: k.Value, Field: w.field(k.Value), Line: k.Line + w.offset, FirstLine: line + w.offset, TopLevel: root})
				}
			}
			w.path = append(w.path, pathPart{key: k.Value, index: -1})
			w.walk(n.Content[i+1], false)
			w.path = w.path[:len(w.path)-1]
		}
	}
}

// seen reports whether the scalar key at content[i] was defined earlier in
// the mapping, and the line where; first indexes large mappings and is
// updated.
func (w *dupWalker) seen(content []*yaml.Node, i int, first map[string]int) (int, bool) {
	k := content[i]
	if first != nil {
		if line, ok := first[k.Value]; ok {
			return line, true
		}
		first[k.Value] = k.Line
		return 0, false
	}
	for j := 0; j < i; j += 2 {
		if c := content[j]; c.Kind == yaml.ScalarNode && c.Value == k.Value {
			return c.Line, true
		}
	}
	return 0, false
}
