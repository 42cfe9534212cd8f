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
		if err := kioutil.CopyLegacyAnnotations(n); err != nil {
			return nil, false
		}
		set[kioutil.IndexAnnotation] = strconv.Itoa(index)
		set[kioutil.LegacyIndexAnnotation] = strconv.Itoa(index)
		if style := yaml.DeriveSeqIndentStyle(doc); style != "" {
			set[kioutil.SeqIndentAnnotation] = style
		}
		keys := make([]string, 0, len(set))
		for k := range set {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, err := n.Pipe(yaml.SetAnnotation(k, set[k])); err != nil {
				return nil, false
			}
		}
		nodes = append(nodes, n)
		index++
	}
	return nodes, true
}
