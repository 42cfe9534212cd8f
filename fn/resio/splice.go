package resio

import (
	"bytes"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// splice rebuilds a changed item's text from its original text, encoding
// only the key/value pairs the function replaced or added. A function edits
// through kyaml's setters, which put fresh nodes (Line 0) in place of the
// values they replace and append fresh pairs; everything else keeps its
// parsed position. So every pair without a fresh node is copied from the
// original lines, and only fresh pairs go through the YAML encoder - for a
// Deployment that gained one pod-template annotation, one line instead of
// the whole object.
//
// It returns ok=false whenever the change has another shape (a removed key
// or sequence entry - seen as fewer parsed keys than the item was read with -
// a flow-style mapping on the way, a fresh node inside a sequence, keys out
// of their original order); the caller then encodes the whole item, which
// is always correct. The one edit it cannot see is a parsed scalar changed
// in place (node.Value = ...) instead of replaced with a setter: code in this
// repository edits through kyaml's setters, and the equivalence tests, which
// check the fast path against kyaml's over every golden case and random
// edits, fail on any such edit.
//
// cutLine (from 1; 0 for none) is a line of raw the output leaves out: an
// annotation whose node was taken out of the tree after parsing. pairs
// remembers encoded pairs across items (nil: none).
func splice(raw []byte, root *yaml.Node, parsedKeys, cutLine int, pairs *pairCache) ([]byte, bool) {
	if countParsedKeys(root) != parsedKeys {
		return nil, false
	}
	if root.Kind != yaml.MappingNode || root.Style&yaml.FlowStyle != 0 || len(root.Content) == 0 || fresh(root.Content[0]) {
		return nil, false
	}
	s := &splicer{lines: splitLines(raw), pairs: pairs}
	if cutLine > 0 && cutLine <= len(s.lines) {
		s.lines[cutLine-1] = nil // neither copied nor read as a key
	}
	first := root.Content[0].Line
	s.copyLines(1, first) // comments before the "- " line
	if !s.mapping(root, first, len(s.lines)+1) || !s.dirtySeen {
		return nil, false
	}
	return s.out.Bytes(), true
}

type splicer struct {
	pairs     *pairCache
	lines     [][]byte // 1-based through line(i)
	out       bytes.Buffer
	dirtySeen bool
}

func splitLines(raw []byte) [][]byte {
	var lines [][]byte
	for len(raw) > 0 {
		i := bytes.IndexByte(raw, '\n')
		if i < 0 {
			lines = append(lines, append(raw[:len(raw):len(raw)], '\n'))
			break
		}
		lines = append(lines, raw[:i+1])
		raw = raw[i+1:]
	}
	return lines
}

func (s *splicer) line(n int) []byte { return s.lines[n-1] }

func (s *splicer) copyLines(from, to int) {
	for n := from; n < to; n++ {
		s.out.Write(s.line(n))
	}
}

func fresh(n *yaml.Node) bool { return n.Line == 0 }

// countParsedKeys counts the parsed (not fresh) mapping keys and sequence
// entries under n. A removed pair or entry, or a replaced mapping or
// sequence value, lowers it.
func countParsedKeys(n *yaml.Node) int {
	count := 0
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if !fresh(n.Content[i]) {
				count++
			}
			count += countParsedKeys(n.Content[i+1])
		}
		return count
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if !fresh(c) {
				count++
			}
		}
	}
	for _, c := range n.Content {
		count += countParsedKeys(c)
	}
	return count
}

// dirty reports whether n or anything below it is fresh.
func dirty(n *yaml.Node) bool {
	if fresh(n) {
		return true
	}
	for _, c := range n.Content {
		if dirty(c) {
			return true
		}
	}
	return false
}

// mapping emits block mapping m, whose pairs occupy lines [from, to).
func (s *splicer) mapping(m *yaml.Node, from, to int) bool {
	indent := m.Content[0].Column - 1
	var trailer [][]byte // comment lines deferred past fresh pairs
	flush := func() {
		for _, l := range trailer {
			s.out.Write(l)
		}
		trailer = nil
	}
	prevLine := from - 1
	for i := 0; i < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if fresh(k) {
			s.dirtySeen = true
			if !s.encodePair(k, v, indent, nil, false) {
				return false
			}
			continue
		}
		if k.Line <= prevLine || k.Column-1 != indent {
			return false // reordered, or not where a key of m belongs
		}
		prevLine = k.Line
		end := to
		for j := i + 2; j < len(m.Content); j += 2 {
			if !fresh(m.Content[j]) {
				end = m.Content[j].Line
				break
			}
		}
		if end <= k.Line || end > len(s.lines)+1 || s.hasKeyLine(k.Line+1, end, indent) {
			return false // a key was removed from this span
		}
		flush()
		body := s.splitTrailer(k.Line, end, indent)
		switch {
		case !dirty(v):
			s.copyLines(k.Line, body)
		case !fresh(v) && v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && !fresh(v.Content[0]):
			s.copyLines(k.Line, v.Content[0].Line)
			if !s.mapping(v, v.Content[0].Line, body) {
				return false
			}
		default:
			s.dirtySeen = true
			// The comment lines after the value (the key's foot comment)
			// are copied as the trailer: the encoder must not write them
			// too, or they double at every change.
			if !s.encodePair(k, v, indent, s.line(k.Line)[:indent], s.hasComment(body, end)) {
				return false
			}
		}
		for n := body; n < end; n++ {
			trailer = append(trailer, s.line(n))
		}
	}
	flush()
	return true
}

// hasKeyLine reports whether a line in [from, to) starts a key at indent:
// text at exactly that indentation that is not a comment or a compact
// sequence entry ("- ").
func (s *splicer) hasKeyLine(from, to, indent int) bool {
	for n := from; n < to; n++ {
		l := s.line(n)
		if len(l) <= indent || len(bytes.TrimLeft(l[:indent], " ")) > 0 {
			continue
		}
		switch c := l[indent]; c {
		case ' ', '\n', '#':
		case '-':
			if len(l) > indent+1 && (l[indent+1] == ' ' || l[indent+1] == '\n') {
				continue
			}
			return true
		default:
			return true
		}
	}
	return false
}

// splitTrailer separates the comment lines at the end of a pair's span that
// head the next key (comments at or left of the key indent, with any blank
// lines among them) from the pair's own body. It returns the first trailer
// line. Lines indented deeper belong to the value (a block scalar may hold
// "#" lines), and blank lines at the very end stay with the body.
func (s *splicer) splitTrailer(from, end, indent int) int {
	body := end
	sawComment := false
	for n := end - 1; n > from; n-- {
		l := s.line(n)
		trimmed := bytes.TrimLeft(l, " ")
		switch {
		case len(trimmed) == 0:
			return body // the cut line
		case len(trimmed) == 1 && trimmed[0] == '\n':
			if !sawComment {
				return body
			}
			body = n
		case trimmed[0] == '#' && len(l)-len(trimmed) <= indent:
			sawComment = true
			body = n
		default:
			return body
		}
	}
	return body
}

// hasComment reports whether a line in [from, to) is a comment.
func (s *splicer) hasComment(from, to int) bool {
	for n := from; n < to; n++ {
		if t := bytes.TrimLeft(s.line(n), " "); len(t) > 0 && t[0] == '#' {
			return true
		}
	}
	return false
}

// encodePair writes "key: value" at indent. firstPrefix replaces the
// indentation of the first line (the "- " of an item's first key); nil means
// spaces. The key's head comment stays where the original text has it, and
// so does its foot comment when footCopied (the trailer holds it).
func (s *splicer) encodePair(k, v *yaml.Node, indent int, firstPrefix []byte, footCopied bool) bool {
	if footCopied && k.FootComment != "" {
		key := *k
		key.FootComment = ""
		k = &key
	}
	text, ok := s.pairs.encode(k, v)
	if !ok {
		return false
	}
	pad := bytes.Repeat([]byte{' '}, indent)
	for i, l := range splitLines(text) {
		switch {
		case i == 0 && firstPrefix != nil:
			s.out.Write(firstPrefix)
		case len(l) > 1:
			s.out.Write(pad)
		}
		s.out.Write(l)
	}
	return true
}

// pairCache remembers how pairs were encoded: a function that rolls ten
// thousand workloads adds the same annotation to each, with one of a few
// values. A nil cache encodes every pair.
type pairCache struct {
	fp     *fingerprinter
	byHash map[uint64][]encodedPair
}

type encodedPair struct {
	key, value *yaml.Node
	text       []byte
}

// encode returns "key: value" encoded at indentation 0, without the key's
// head comment (it stays where the original text has it).
func (c *pairCache) encode(k, v *yaml.Node) ([]byte, bool) {
	var h uint64
	if c != nil {
		h = c.fp.sum(k)*31 + c.fp.sum(v)
		for _, e := range c.byHash[h] {
			if sameTree(e.value, v) && sameScalar(e.key, k) {
				return e.text, true
			}
		}
	}
	key := *k
	key.HeadComment = ""
	pair := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{&key, v}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(pair); err != nil {
		return nil, false
	}
	if err := enc.Close(); err != nil {
		return nil, false
	}
	if c != nil {
		if c.byHash == nil {
			c.byHash = map[uint64][]encodedPair{}
		}
		c.byHash[h] = append(c.byHash[h], encodedPair{key: k, value: v, text: buf.Bytes()})
	}
	return buf.Bytes(), true
}

// sameScalar reports whether two keys encode alike (head comments aside).
func sameScalar(a, b *yaml.Node) bool {
	return a.Kind == b.Kind && a.Style == b.Style && a.Tag == b.Tag && a.Value == b.Value && a.Anchor == b.Anchor &&
		a.LineComment == b.LineComment && a.FootComment == b.FootComment && len(a.Content) == 0 && len(b.Content) == 0 &&
		a.Alias == nil && b.Alias == nil
}

// sameTree reports whether two node trees encode alike.
func sameTree(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || a.Style != b.Style || a.Tag != b.Tag || a.Value != b.Value || a.Anchor != b.Anchor ||
		a.HeadComment != b.HeadComment || a.LineComment != b.LineComment || a.FootComment != b.FootComment ||
		(a.Alias == nil) != (b.Alias == nil) || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Alias != nil && !sameTree(a.Alias, b.Alias) {
		return false
	}
	for i := range a.Content {
		if !sameTree(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
