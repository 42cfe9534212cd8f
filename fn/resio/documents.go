package resio

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// spliceDocuments rebuilds the text of a file whose resources changed,
// keeping the text of every document whose resource did not: unchanged
// resources are not re-encoded (re-encoding is not always stable - a |+
// block scalar followed by a comment gains a blank line at every pass
// through kyaml's writer), and neither are the comments and layout around
// them. The documents are cut as kyaml's reader cuts them (at every line
// that starts with "---"), and the k-th document that holds a resource is
// the file's k-th resource. replace(k, doc) returns the new text of
// resource k (ending in a newline) when it changed, doc being its text as
// read; appended are new resources'
// texts, added at the end. original must be text the caller's reader
// parsed: most documents are told apart by their text, not parsed again
// (holdsResourceByText). ok is false when the file's text cannot be cut
// that way (CRLF line ends, which kyaml's reader rewrites, or a document
// the text does not decide that does not parse); resources is the number
// of documents that hold one, which the caller must check against what it
// read from the file.
func spliceDocuments(original []byte, replace func(k int, doc string) (string, bool), appended []string) (out []byte, resources int, ok bool) {
	s := string(original)
	if strings.Contains(s, "\r") {
		return nil, 0, false
	}
	var b bytes.Buffer
	prev := 0
	emit := func(doc string) bool {
		holds, parsed := holdsResource(doc)
		if !parsed {
			return false
		}
		if holds {
			if text, changed := replace(resources, doc); changed {
				doc = text
			}
			resources++
		}
		b.WriteString(doc)
		return true
	}
	for _, loc := range documentSeparator.FindAllStringIndex(s, -1) {
		// The document, with the newline before the separator line; the
		// separator line as written.
		if !emit(s[prev : loc[0]+1]) {
			return nil, 0, false
		}
		b.WriteString(s[loc[0]+1 : loc[1]])
		prev = loc[1]
	}
	if !emit(s[prev:]) {
		return nil, 0, false
	}
	for _, text := range appended {
		if b.Len() > 0 && !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
			b.WriteByte('\n')
		}
		if b.Len() > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(text)
	}
	return b.Bytes(), resources, true
}

// holdsResource reports whether a document holds a resource, as kyaml's
// reader decides it (a document of comments, or null, holds none), and
// whether it parsed. The text decides the common cases without parsing
// (holdsResourceByText); the rest is parsed.
func holdsResource(doc string) (holds, parsed bool) {
	if holds, decided := holdsResourceByText(doc); decided {
		return holds, true
	}
	var node yaml.Node
	if err := yaml.NewDecoder(strings.NewReader(doc)).Decode(&node); err != nil {
		return false, errors.Is(err, io.EOF)
	}
	if yaml.IsYNodeEmptyDoc(&node) {
		return false, true
	}
	return !yaml.IsMissingOrNull(yaml.NewRNode(&node)), true
}

// holdsResourceByText decides from the text alone, when it can, whether a
// document holds a resource: one of blank and comment lines (and a "---"
// line that starts it) holds none; one whose first other line is a plain
// mapping key at column 0 ("apiVersion: v1") holds a block mapping, a
// resource - a document the caller's reader already parsed. Anything else
// (a directive, "...", a flow collection, a scalar, a key in quotes)
// is left to the parser: decided is false.
func holdsResourceByText(doc string) (holds, decided bool) {
	for len(doc) > 0 {
		line, rest, _ := strings.Cut(doc, "\n")
		doc = rest
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case trimmed == "" || trimmed[0] == '#':
			continue
		case line == "---" || strings.HasPrefix(line, "--- #"):
			continue
		}
		return plainKeyLine(line), plainKeyLine(line)
	}
	return false, true
}

// plainKeyLine reports whether line starts, at column 0, with a plain
// mapping key of letters, digits and "_-./" followed by ":" and a space
// or the end of the line.
func plainKeyLine(line string) bool {
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.' || c == '/'):
		case i > 0 && c == ':':
			return i+1 == len(line) || line[i+1] == ' '
		default:
			return false
		}
	}
	return false
}
