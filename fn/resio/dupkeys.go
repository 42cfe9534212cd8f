package resio

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

// documentSeparator is the separator kyaml's ByteReader splits on (any line
// that starts with "---"; content after it other than a comment is an
// error there), so that documents and lines here are cut and counted the
// way they are there.
var documentSeparator = regexp.MustCompile(`\n---.*\n`)

// duplicateKeys parses data document by document, as kyaml's reader does,
// and returns every duplicate mapping key with its lines in data, in file
// order. Documents that do not parse are skipped: the reader reports those.
func duplicateKeys(data []byte) []kube.DuplicateKey {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	var out []kube.DuplicateKey
	prev := 0
	scan := func(doc string, start int) {
		dec := yaml.NewDecoder(strings.NewReader(doc))
		var node yaml.Node
		if err := dec.Decode(&node); err != nil && err != io.EOF {
			return
		}
		out = append(out, kube.DuplicateKeysAt(&node, strings.Count(s[:start], "\n"))...)
	}
	for _, loc := range documentSeparator.FindAllStringIndex(s, -1) {
		scan(s[prev:loc[0]], prev)
		prev = loc[1]
	}
	scan(s[prev:], prev)
	return out
}

// duplicateKeysMessage describes the duplicates of the file at path on one
// line: the first one in full, and how many more there are.
func duplicateKeysMessage(path string, dups []kube.DuplicateKey) string {
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
	dups := duplicateKeys(data)
	if len(dups) == 0 {
		return nil
	}
	return errors.New(duplicateKeysMessage(path, dups))
}
