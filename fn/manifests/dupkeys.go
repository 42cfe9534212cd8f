package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DuplicateKey is a mapping key defined twice in the same mapping. YAML
// parsers keep one of the two values silently (kyaml keeps the first), so a
// file with one - typically two manifests concatenated without "---" - does
// not say what its author meant. kubectl rejects such files; so do check,
// init and render.
type DuplicateKey struct {
	// Key is the key as written.
	Key string
	// Line is the 1-based line of the second definition, FirstLine of the
	// first, both counted from the start of the file.
	Line, FirstLine int
	// TopLevel is true when the mapping is a document's root: the usual
	// sign of a missing "---" between two documents.
	TopLevel bool
}

// HasDuplicateKeys reports whether any mapping in nodes defines a key twice.
// It only walks nodes that are already parsed; DuplicateKeys then finds the
// lines in the file.
func HasDuplicateKeys(nodes ...*yaml.RNode) bool {
	for _, n := range nodes {
		found := false
		walkDuplicates(n.YNode(), 0, true, func(DuplicateKey) { found = true })
		if found {
			return true
		}
	}
	return false
}

// documentSeparator is the separator kyaml's ByteReader splits on (any line
// that starts with "---"), so that lines here count the way they count
// there.
var documentSeparator = regexp.MustCompile(`\n---.*\n`)

// DuplicateKeys parses data document by document, as kyaml's reader does,
// and returns every duplicate mapping key with its lines in data, in file
// order. Documents that do not parse are skipped: the reader reports those.
func DuplicateKeys(data []byte) []DuplicateKey {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	var out []DuplicateKey
	prev := 0
	scan := func(doc string, start int) {
		dec := yaml.NewDecoder(strings.NewReader(doc))
		var node yaml.Node
		if err := dec.Decode(&node); err != nil && err != io.EOF {
			return
		}
		offset := strings.Count(s[:start], "\n")
		walkDuplicates(&node, offset, true, func(d DuplicateKey) { out = append(out, d) })
	}
	for _, loc := range documentSeparator.FindAllStringIndex(s, -1) {
		scan(s[prev:loc[0]], prev)
		prev = loc[1]
	}
	scan(s[prev:], prev)
	return out
}

// walkDuplicates calls found for every duplicate key under n; offset is
// added to the lines. Aliases are not followed: the anchored node is
// walked where it is defined.
func walkDuplicates(n *yaml.Node, offset int, root bool, found func(DuplicateKey)) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkDuplicates(c, offset, true, found)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			walkDuplicates(c, offset, false, found)
		}
	case yaml.MappingNode:
		var first map[string]int
		if len(n.Content) > 2 {
			first = make(map[string]int, len(n.Content)/2)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && first != nil {
				if line, ok := first[k.Value]; ok {
					found(DuplicateKey{Key: k.Value, Line: k.Line + offset, FirstLine: line + offset, TopLevel: root})
				} else {
					first[k.Value] = k.Line
				}
			}
			walkDuplicates(n.Content[i+1], offset, false, found)
		}
	}
}

// duplicateKeysMessage describes the duplicates of the file at path on one
// line: the first one in full, and how many more there are.
func duplicateKeysMessage(path string, dups []DuplicateKey) string {
	if len(dups) == 0 {
		return path + ": a mapping key is defined twice"
	}
	d := dups[0]
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s:%d: mapping key %s already defined at line %d", path, d.Line, kube.Quote(d.Key), d.FirstLine)
	if d.TopLevel {
		b.WriteString(" (a missing --- between two documents?)")
	}
	if n := len(dups) - 1; n > 0 {
		fmt.Fprintf(&b, "; %d more duplicate key(s) in the file", n)
	}
	return b.String()
}

// DuplicateKeysError returns an error naming the first duplicate key of the
// file at path, with its line, or nil when data has none.
func DuplicateKeysError(path string, data []byte) error {
	dups := DuplicateKeys(data)
	if len(dups) == 0 {
		return nil
	}
	return errors.New(duplicateKeysMessage(path, dups))
}
