package resio

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// documentParser parses YAML documents that hold one resource each - the
// documents of the files `rotate-certs render` reads - into the node tree
// yaml.v3's decoder gives for them, for the part of YAML the block parser
// follows (see blockParser): a block mapping whose first key is on the
// document's first line that is neither empty nor a comment, at column 0
// (the comments above it placed as yaml.v3 places them:
// leadingComments), and nothing but blank lines after it. Anything else -
// a "---" line before the first key, a comment after the last value, a
// flow mapping, anything the block parser declines - gives nil, and the
// caller hands the document to yaml.v3. Each document is parsed into the
// parser's slabs and copied out of them (Parse).
type documentParser struct {
	p *blockParser
	// nodes and ptrs are the slabs every document is parsed into, then
	// copied out of (compact), used again for the next.
	nodes []yaml.Node
	ptrs  []*yaml.Node
}

// newDocumentParser returns a parser for the documents of one read.
func newDocumentParser() *documentParser {
	return &documentParser{p: newBlockParser(), nodes: make([]yaml.Node, 256), ptrs: make([]*yaml.Node, 1024)}
}

// Parse returns raw's document node (Kind yaml.DocumentNode, its content
// the mapping), or nil. The document is parsed into the parser's slabs
// and its nodes copied out into arrays of their own (compact): a document
// is freed whole when nothing holds it any more, whatever was parsed
// beside it, and takes no more than its nodes. With nodes left on shared
// slabs, diff kept what BASE read of the files a change rewrote alive (17
// MB of a 1,000-cluster pull request), and a render, which parses each
// package with a parser of its own, kept each parser's slabs (279 MB
// instead of 108 for 1,000 clusters).
func (d *documentParser) Parse(raw []byte) *yaml.Node {
	p := d.p
	p.nodes, p.ptrs = d.nodes, d.ptrs
	doc := p.parseDocument(raw)
	if doc == nil {
		return nil
	}
	return compact(doc)
}

// compact returns a copy of the tree under n in two arrays of its own, one
// of nodes and one of the content slices' pointers; each content slice has
// its capacity capped, as the parser's, so that an append copies it.
func compact(n *yaml.Node) *yaml.Node {
	nodes, ptrs := treeSize(n)
	c := compactor{nodes: make([]yaml.Node, nodes), ptrs: make([]*yaml.Node, ptrs)}
	return c.copy(n)
}

// treeSize counts the nodes under n, n included, and their children.
func treeSize(n *yaml.Node) (nodes, ptrs int) {
	nodes, ptrs = 1, len(n.Content)
	for _, c := range n.Content {
		cn, cp := treeSize(c)
		nodes, ptrs = nodes+cn, ptrs+cp
	}
	return nodes, ptrs
}

// compactor hands out the arrays of one compact copy.
type compactor struct {
	nodes []yaml.Node
	ptrs  []*yaml.Node
}

func (c *compactor) copy(n *yaml.Node) *yaml.Node {
	out := &c.nodes[0]
	c.nodes = c.nodes[1:]
	*out = *n
	if len(n.Content) == 0 {
		return out
	}
	content := c.ptrs[:len(n.Content):len(n.Content)]
	c.ptrs = c.ptrs[len(n.Content):]
	for i, child := range n.Content {
		content[i] = c.copy(child)
	}
	out.Content = content
	return out
}

func (p *blockParser) parseDocument(raw []byte) *yaml.Node {
	if !p.scanLines(raw) {
		return nil
	}
	docHead, keyHead, at := p.leadingComments()
	if at == len(p.lines) {
		return nil
	}
	first := p.lines[at]
	if p.fail || first.indent != 0 || !plainKeyStart(raw[first.start]) {
		return nil
	}
	root, next := p.mapping(at, 0)
	if p.fail || root == nil {
		return nil
	}
	for ; next < len(p.lines); next++ {
		if !p.lines[next].blank() {
			return nil
		}
	}
	root.Content[0].HeadComment = keyHead
	doc := p.node(yaml.DocumentNode, "", at+1, 1)
	doc.HeadComment = docHead
	doc.Content = p.content(root)
	return doc
}

// leadingComments reads the comment and empty lines before a document's
// first key as yaml.v3 places them: the comment lines right above the key
// are its head comment, the ones before an empty line the document's (each
// run of them apart from the next by one empty line); empty lines before
// the first comment count for nothing. at is the first other line. It
// declines (p.fail) a comment that does not start its line and a line of
// spaces: where yaml.v3 puts those is left to it.
func (p *blockParser) leadingComments() (docHead, keyHead string, at int) {
	var runs [][]string
	empty := true // the line before was empty (or there was none)
	for ; at < len(p.lines); at++ {
		l := p.lines[at]
		switch {
		case l.start == l.end:
			empty = true
		case l.blank() || p.isComment(at) && l.indent > 0:
			p.decline()
			return "", "", at
		case p.isComment(at):
			if empty {
				runs = append(runs, nil)
			}
			runs[len(runs)-1] = append(runs[len(runs)-1], string(p.raw[l.start:l.end]))
			empty = false
		default:
			if len(runs) > 0 && !empty {
				keyHead = strings.Join(runs[len(runs)-1], "\n")
				runs = runs[:len(runs)-1]
			}
			docs := make([]string, len(runs))
			for i, r := range runs {
				docs[i] = strings.Join(r, "\n")
			}
			return strings.Join(docs, "\n\n"), keyHead, at
		}
	}
	return "", "", at
}

// plainKeyStart reports whether a line starting with c can start a plain
// mapping key: not an indicator (a sequence entry, a comment, a directive,
// a document marker, a flow collection, a quote, a tag, an anchor ...).
func plainKeyStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '/' || c == '.'
}
