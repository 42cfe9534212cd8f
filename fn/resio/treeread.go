package resio

import (
	"bytes"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readNodes reads the resources of one file (see readFile): on the fast
// reading when it can, else with kyaml's reader, which gives the same
// resources or the same error.
func readNodes(data []byte, rel string, dp *documentParser) ([]*yaml.RNode, error) {
	if nodes, ok := readFile(data, rel, dp); ok {
		return nodes, nil
	}
	r := &kio.ByteReader{Reader: bytes.NewReader(data), DisableUnwrapping: true, OmitReaderAnnotations: rel == "", PreserveSeqIndent: rel != ""}
	if rel != "" {
		r.SetAnnotations = map[string]string{kioutil.PathAnnotation: rel, kioutil.LegacyPathAnnotation: rel}
	}
	return r.Read()
}

// readFile reads the resources of one file as kyaml's ByteReader does -
// for ReadTree (rel, the file's path, set: lists not unwrapped, the
// sequence indentation and the file's path recorded, each resource's index
// in the file), or for ReadPaths (rel "": no annotation) - node for node
// and annotation for annotation, but parses the
// documents documentParser takes with it rather than with yaml.v3:
// reading the tree was the largest cost of `render`. ok is false when the
// file holds something this reading leaves to kyaml's reader - CR line
// ends, a separator line with content, a document that does not parse or
// whose metadata kyaml refuses: read the file with it, which gives the
// same resources or the same error. TestReadFileMatchesKyaml holds the
// two together.
func readFile(data []byte, rel string, dp *documentParser) (nodes []*yaml.RNode, ok bool) {
	s := string(data)
	if strings.Contains(s, "\r") {
		return nil, false
	}
	var docs []string
	if len(s) > 0 {
		prev := 0
		for _, loc := range documentSeparator.FindAllStringIndex(s, -1) {
			if after := strings.TrimSpace(s[loc[0]+4 : loc[1]]); after != "" && after[0] != '#' {
				return nil, false
			}
			docs = append(docs, s[prev:loc[0]])
			prev = loc[1]
		}
		docs = append(docs, s[prev:])
	}
	// kyaml's reader keeps one map of annotations to set for the whole
	// file: a document without sequences keeps the indentation style of
	// the document before it.
	set := map[string]string{kioutil.PathAnnotation: rel, kioutil.LegacyPathAnnotation: rel}
	index := 0
	for i, doc := range docs {
		if i != len(docs)-1 {
			doc += "\n"
		}
		node := dp.Parse([]byte(doc))
		if node == nil {
			node = &yaml.Node{}
			err := yaml.NewDecoder(bytes.NewBufferString(doc)).Decode(node)
			if errors.Is(err, io.EOF) {
				continue
			}
			if err != nil {
				return nil, false
			}
			if yaml.IsYNodeEmptyDoc(node) {
				continue
			}
		}
		n := yaml.NewRNode(node)
		if yaml.IsMissingOrNull(n) {
			continue
		}
		if _, err := n.GetMeta(); err != nil && err != yaml.ErrMissingMetadata {
			return nil, false
		}
		if rel == "" {
			nodes = append(nodes, n)
			continue
		}
		set[kioutil.IndexAnnotation] = strconv.Itoa(index)
		set[kioutil.LegacyIndexAnnotation] = strconv.Itoa(index)
		if style := yaml.DeriveSeqIndentStyle(doc); style != "" {
			set[kioutil.SeqIndentAnnotation] = style
		}
		if !annotate(n, set) {
			return nil, false
		}
		nodes = append(nodes, n)
		index++
	}
	return nodes, true
}

// annotate sets the annotations of set on n, in the order of their keys,
// as kyaml's reader does (kioutil.CopyLegacyAnnotations, then
// yaml.SetAnnotation for each) - directly on the common shape (newAnnotations),
// since kyaml's filters were half of reading a file. false: kyaml refused.
func annotate(n *yaml.RNode, set map[string]string) bool {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if a := newAnnotations(n.YNode()); a != nil {
		for _, k := range keys {
			// yaml.SetAnnotation's value; FieldSetter's key for a new field.
			v := yaml.NewStringRNode(set[k]).YNode()
			v.Style = yaml.SingleQuotedStyle
			a.Content = append(a.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
		}
		return true
	}
	if err := kioutil.CopyLegacyAnnotations(n); err != nil {
		return false
	}
	for _, k := range keys {
		if _, err := n.Pipe(yaml.SetAnnotation(k, set[k])); err != nil {
			return false
		}
	}
	return true
}

// newAnnotations returns the metadata.annotations mapping of a resource
// whose annotations kyaml's bookkeeping would only append to, creating it
// at the end of metadata as yaml.SetAnnotation does when it is missing;
// nil, having changed nothing, for any other shape: metadata missing,
// empty or not a mapping, annotations empty or not a mapping (kyaml
// removes them and adds them again at the end), or an annotation of
// kyaml's own already there (CopyLegacyAnnotations copies it, and
// SetAnnotation replaces it in place). The key found first is the one
// kyaml's field lookups find.
func newAnnotations(root *yaml.Node) *yaml.Node {
	if root == nil || root.Kind != yaml.MappingNode {
		return nil
	}
	meta := firstValue(root, yaml.MetadataField)
	if meta == nil || meta.Kind != yaml.MappingNode || meta.Tag == yaml.NodeTagNull || len(meta.Content) == 0 {
		return nil
	}
	a := firstValue(meta, yaml.AnnotationsField)
	if a == nil {
		a = &yaml.Node{Kind: yaml.MappingNode}
		meta.Content = append(meta.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: yaml.AnnotationsField}, a)
		return a
	}
	if a.Kind != yaml.MappingNode || a.Tag == yaml.NodeTagNull || len(a.Content) == 0 {
		return nil
	}
	for i := 0; i+1 < len(a.Content); i += 2 {
		if k := a.Content[i].Value; strings.HasPrefix(k, "config.kubernetes.io/") || strings.HasPrefix(k, "internal.config.kubernetes.io/") {
			return nil
		}
	}
	return a
}

// firstValue returns the value of the first key of mapping m named name,
// or nil.
func firstValue(m *yaml.Node, name string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i+1]
		}
	}
	return nil
}
