package resio

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// writeResults writes "results:" and the list in block style, byte for
// byte as kyaml's framework.Execute does (yaml.Marshal, then the list's
// encoder). A run reports one result per certificate, tens of thousands at
// scale, and kyaml's reflection-based marshalling of them cost as much as
// the rest of the output; results are flat records of strings, so they are
// written directly, each string in the style the YAML encoder would choose
// (scalars.append). A result with a field value, tags, or a string the
// direct writer does not style (line breaks, tabs, control characters) is
// marshalled by kyaml.
func writeResults(w *bufio.Writer, results framework.Results) error {
	w.WriteString("results:\n")
	sc := &scalars{}
	for _, r := range results {
		if !sc.direct(r) {
			b, err := marshalResult(r)
			if err != nil {
				return err
			}
			w.Write(b)
			continue
		}
		w.WriteString("- ")
		first := true
		indent := func() string {
			if first {
				first = false
				return ""
			}
			return "  "
		}
		str := func(indent, key, value string) {
			if value == "" {
				return
			}
			w.WriteString(indent)
			w.WriteString(key)
			w.WriteString(": ")
			w.Write(sc.append(value))
			w.WriteByte('\n')
		}
		if r.Message != "" {
			str(indent(), "message", r.Message)
		}
		if r.Severity != "" {
			str(indent(), "severity", string(r.Severity))
		}
		if ref := r.ResourceRef; ref != nil && *ref == (yaml.ResourceIdentifier{}) {
			// kyaml marshals an empty reference as {}; a bare key would
			// read back as null (found by FuzzFastPathMatchesKyaml).
			w.WriteString(indent() + "resourceRef: {}\n")
		} else if ref != nil {
			w.WriteString(indent() + "resourceRef:\n")
			str("    ", "apiVersion", ref.APIVersion)
			str("    ", "kind", ref.Kind)
			str("    ", "name", ref.Name)
			str("    ", "namespace", ref.Namespace)
		}
		if r.Field != nil && r.Field.Path != "" {
			w.WriteString(indent() + "field:\n")
			str("    ", "path", r.Field.Path)
		} else if r.Field != nil {
			w.WriteString(indent() + "field: {}\n")
		}
		if r.File != nil && (r.File.Path != "" || r.File.Index != 0) {
			w.WriteString(indent() + "file:\n")
			str("    ", "path", r.File.Path)
			if r.File.Index != 0 {
				w.WriteString("    index: " + strconv.Itoa(r.File.Index) + "\n")
			}
		} else if r.File != nil {
			w.WriteString(indent() + "file: {}\n")
		}
		if first { // an empty result
			w.WriteString("{}\n")
		}
	}
	return nil
}

// marshalResult writes one result as framework.Execute does: marshalled,
// parsed, and encoded again as an entry of the results list.
func marshalResult(r *framework.Result) ([]byte, error) {
	b, err := yaml.Marshal(framework.Results{r})
	if err != nil {
		return nil, err
	}
	n, err := yaml.Parse(string(b))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(n.Document()); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// scalars writes strings as the YAML encoder styles them, remembering the
// encoder's answer for the strings it has to ask it about.
type scalars struct {
	buf    []byte
	styled map[string][]byte
}

// direct reports whether every string of r can be written by append.
func (sc *scalars) direct(r *framework.Result) bool {
	if len(r.Tags) > 0 || r.Field != nil && (r.Field.CurrentValue != nil || r.Field.ProposedValue != nil) {
		return false
	}
	ok := simpleString(r.Message) && simpleString(string(r.Severity))
	if ref := r.ResourceRef; ref != nil {
		ok = ok && simpleString(ref.APIVersion) && simpleString(ref.Kind) && simpleString(ref.Name) && simpleString(ref.Namespace)
	}
	if r.Field != nil {
		ok = ok && simpleString(r.Field.Path)
	}
	if r.File != nil {
		ok = ok && simpleString(r.File.Path)
	}
	return ok
}

// simpleString reports whether s is valid UTF-8 made of characters the
// YAML encoder prints as they are, with no line break or tab: the strings
// whose style append decides.
func simpleString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return false
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0: // controls, tab, breaks (NEL)
			return false
		case r == 0x2028 || r == 0x2029 || r == 0xfeff || r >= 0xfffe:
			// Line breaks, the BOM, and what the encoder escapes: it
			// prints no character beyond the Basic Multilingual Plane.
			return false
		}
		i += size - 1
	}
	return true
}

// append returns s as the YAML encoder writes a string value in block
// context: plain when it reads back as the same string and nothing in it
// is a YAML indicator where it stands, single-quoted when it would read as
// something else, double-quoted when the encoder quotes it because plain
// it would resolve to another type (a number, a bool, null). s must be a
// simpleString.
func (sc *scalars) append(s string) []byte {
	if hint := s[0]; strings.IndexByte("+-.0123456789yYnNtTfFoO~<", hint) >= 0 {
		// It may resolve to something other than a string: ask the
		// encoder, once per string.
		if b, ok := sc.styled[s]; ok {
			return b
		}
		b, ok := askEncoder(s)
		if !ok {
			b = strconv.AppendQuote(nil, s) // not reached for a simpleString
		}
		if sc.styled == nil {
			sc.styled = map[string][]byte{}
		}
		sc.styled[s] = b
		return b
	}
	sc.buf = sc.buf[:0]
	if plainAllowed(s) {
		return append(sc.buf, s...)
	}
	sc.buf = append(sc.buf, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			sc.buf = append(sc.buf, '\'')
		}
		sc.buf = append(sc.buf, s[i])
	}
	return append(sc.buf, '\'')
}

// askEncoder styles s as framework.Execute writes a result's string:
// marshalled, parsed and encoded again.
func askEncoder(s string) ([]byte, bool) {
	b, err := yaml.Marshal(map[string]string{"k": s})
	if err != nil {
		return nil, false
	}
	n, err := yaml.Parse(string(b))
	if err != nil {
		return nil, false
	}
	text, err := n.String()
	if err != nil || !strings.HasPrefix(text, "k: ") || strings.Count(text, "\n") != 1 {
		return nil, false
	}
	return []byte(text[len("k: ") : len(text)-1]), true
}

// plainAllowed reports whether the encoder may write the simpleString s
// plain in block context: no space at either end, not a document marker,
// no indicator at its start, no ": " and no " #" in it.
func plainAllowed(s string) bool {
	if s[0] == ' ' || s[len(s)-1] == ' ' || strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		return false
	}
	blankAfter := func(i int) bool { return i+1 >= len(s) || s[i+1] == ' ' }
	switch s[0] {
	case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '?', ':', '-':
		if blankAfter(0) {
			return false
		}
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case ':':
			if blankAfter(i) {
				return false
			}
		case '#':
			if s[i-1] == ' ' {
				return false
			}
		}
	}
	return true
}
