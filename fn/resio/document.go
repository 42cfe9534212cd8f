package resio

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// documentParser parses YAML documents that hold one resource each - the
// documents of the files `rotate-certs render` reads - into the node tree
// yaml.v3's decoder gives for them, for the part of YAML the block parser
// follows (see blockParser): a block mapping whose first key is on the
// document's first line, at column 0, and nothing but blank lines after
// it. Anything else - a comment or a "---" line before the first key, a
// comment after the last value, a flow mapping, anything the block parser
// declines - gives nil, and the caller hands the document to yaml.v3.
// Nodes come from slabs shared by the documents a parser parses.
type documentParser struct{ p *blockParser }

// newDocumentParser returns a parser for the documents of one read.
func newDocumentParser() *documentParser { return &documentParser{p: newBlockParser()} }

// Parse returns raw's document node (Kind yaml.DocumentNode, its content
// the mapping), or nil.
func (d *documentParser) Parse(raw []byte) *yaml.Node {
	p := d.p
	m := p.mark()
	doc := p.parseDocument(raw)
	if doc == nil {
		p.rewind(m)
	}
	return doc
}

func (p *blockParser) parseDocument(raw []byte) *yaml.Node {
	if !p.scanLines(raw) {
		return nil
	}
	first := p.lines[0]
	if first.indent != 0 || !plainKeyStart(raw[first.start]) {
		return nil
	}
	root, next := p.mapping(0, 0)
	if p.fail || root == nil {
		return nil
	}
	for ; next < len(p.lines); next++ {
		if !p.lines[next].blank() {
			return nil
		}
	}
	doc := p.node(yaml.DocumentNode, "", 1, 1)
	doc.Content = p.content(root)
	return doc
}

// plainKeyStart reports whether a line starting with c can start a plain
// mapping key: not an indicator (a sequence entry, a comment, a directive,
// a document marker, a flow collection, a quote, a tag, an anchor ...).
func plainKeyStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '/' || c == '.'
}
