// Package krmio reads and writes ResourceLists without re-encoding what the
// function did not touch.
//
// kyaml's ByteReadWriter parses the whole list into one node tree and
// encodes all of it again into one buffer; at 100,000 resources that is most
// of a function's time and memory. kustomize and kpt both emit ResourceLists
// in kyaml's canonical block layout (items at column 0, "- " per item), so
// the list can be split into items at the text level: items the function
// needs are parsed one by one, everything else is copied through byte for
// byte, and only items whose node tree changed are encoded again. Output is
// streamed. Any input that is not in the canonical layout (flow style,
// several documents, CRLF, anchors that could span items, quoted scalars or
// flow collections that continue over lines) is handed to the plain kyaml
// path instead, so the fast path never has to guess.
package krmio

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrNotCanonical means the input is valid YAML (perhaps) but not in the
// layout the fast path splits; callers fall back to kyaml's reader. Run
// wraps it with the reason and the line where the layout was left.
var ErrNotCanonical = errors.New("ResourceList is not in canonical block layout")

// notCanonical wraps ErrNotCanonical with why, and where (a line number
// from 1; 0 for the list as a whole), the input left the layout.
func notCanonical(line int, why string) error {
	if line == 0 {
		return fmt.Errorf("%w: %s", ErrNotCanonical, why)
	}
	return fmt.Errorf("%w: line %d: %s", ErrNotCanonical, line, why)
}

// chunk is one item's text: any comment lines before it, then the lines of
// the "- " entry, each newline-terminated.
type chunk struct {
	raw        []byte
	apiVersion string
	kind       string
}

// listText is a ResourceList split at the text level.
type listText struct {
	apiVersion     string
	kind           string
	items          []chunk
	functionConfig []byte // the "functionConfig:" key and its value lines
}

var topLevelKeys = map[string]bool{"apiVersion": true, "kind": true, "items": true, "functionConfig": true, "results": true}

// split cuts a canonical ResourceList into its parts.
func split(data []byte) (*listText, error) {
	if at, why := unreadable(data); at >= 0 {
		return nil, notCanonical(1+bytes.Count(data[:at], []byte("\n")), why)
	}
	out := &listText{}
	section := ""
	var cur *chunk
	var pendingComments []byte
	var fc bytes.Buffer
	scanner := newOpenScanner()
	seen := map[string]bool{} // top-level keys
	flush := func() {
		if cur != nil {
			out.items = append(out.items, *cur)
			cur = nil
		}
	}
	n := 0 // line number
	for len(data) > 0 {
		n++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			line, data = append(data, '\n'), nil
		}
		if scanner.leavesOpen(line[:len(line)-1]) {
			return nil, notCanonical(n, "a quoted scalar or flow collection continues on the next line")
		}
		switch {
		case isBlank(line):
			if len(pendingComments) > 0 {
				// A comment, then a blank line: YAML may make it the foot
				// of the item before rather than the head of the next.
				return nil, notCanonical(n, "a blank line after a comment between items")
			}
			switch {
			case section == "items" && cur != nil:
				cur.raw = append(cur.raw, line...)
			case section == "functionConfig":
				fc.Write(line)
			}
			continue
		case line[0] == '#':
			if section == "items" {
				pendingComments = append(pendingComments, line...)
			} else if section == "functionConfig" {
				fc.Write(line)
			}
			continue
		case bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("...")):
			if section != "" {
				return nil, notCanonical(n, "a second YAML document")
			}
			continue
		case line[0] == ' ':
			switch section {
			case "items":
				if cur == nil {
					return nil, notCanonical(n, "items indented under items: (kyaml writes them at column 0)")
				}
				// Comments at column 0 that more of the item follows are
				// inside it, not before the next item.
				cur.raw = append(cur.raw, pendingComments...)
				pendingComments = nil
				cur.raw = append(cur.raw, line...)
			case "functionConfig":
				fc.Write(line)
			case "results":
			default:
				return nil, notCanonical(n, "an indented line under "+section+":")
			}
			continue
		case line[0] == '-':
			if section == "results" {
				continue // a previous run's results: replaced by this run's
			}
			if section != "items" || (len(line) > 1 && line[1] != ' ' && line[1] != '\n') {
				return nil, notCanonical(n, "a sequence entry outside items:")
			}
			flush()
			cur = &chunk{raw: append(pendingComments, line...)}
			pendingComments = nil
			continue
		}
		// A top-level key.
		flush()
		if len(pendingComments) > 0 {
			return nil, notCanonical(n, "comments between the last item and the next key")
		}
		key, value, ok := strings.Cut(strings.TrimRight(string(line), "\n"), ":")
		if !ok || !topLevelKeys[key] {
			return nil, notCanonical(n, "not a ResourceList key")
		}
		if seen[key] {
			// kyaml reads the first of duplicate keys; the splitter would
			// read both.
			return nil, notCanonical(n, key+" appears twice")
		}
		seen[key] = true
		value = strings.TrimSpace(value)
		section = key
		switch key {
		case "apiVersion":
			out.apiVersion = value
		case "kind":
			out.kind = value
		case "items":
			if value != "" && value != "[]" {
				return nil, notCanonical(n, "items written in flow style")
			}
		case "functionConfig":
			if value != "" {
				return nil, notCanonical(n, "functionConfig written in flow style")
			}
			fc.Write(line)
		case "results":
		}
	}
	flush()
	if len(pendingComments) > 0 {
		return nil, notCanonical(n, "comments after the last item")
	}
	if out.kind != "ResourceList" {
		return nil, notCanonical(0, "no top-level kind: ResourceList")
	}
	out.functionConfig = fc.Bytes()
	for i := range out.items {
		c := &out.items[i]
		c.apiVersion, c.kind = typeOf(c.raw)
	}
	return out, nil
}

// unreadable returns the offset of the first byte the splitter cannot
// trust, and what it is, or -1. Tabs and CR are valid YAML but not kyaml's
// layout. YAML's reader refuses control characters and invalid UTF-8, and
// reads NEL, LS and PS as line breaks where the splitter would not: items
// the fast path copies unparsed are thereby text kyaml reads the same way.
// Anything else goes to kyaml, which names the offending byte.
func unreadable(data []byte) (int, string) {
	for i := 0; i < len(data); {
		b := data[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '\n':
			case b == '\r':
				return i, "a CR (CRLF line ends)"
			case b == '\t':
				return i, "a tab"
			case b < 0x20 || b == 0x7f:
				return i, fmt.Sprintf("the control character %#02x", b)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return i, "invalid UTF-8"
		case r == 0x85 || r == 0x2028 || r == 0x2029:
			return i, fmt.Sprintf("%U, a line break to YAML", r)
		case r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000:
		default:
			return i, fmt.Sprintf("%U, a character YAML does not allow", r) // C1 controls, U+FFFE, U+FFFF
		}
		i += size
	}
	return -1, ""
}

func isBlank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// typeOf finds the item's apiVersion and kind from its top-level lines
// ("- key: v" or "  key: v") without parsing. The first line of each
// counts, as for kyaml's field lookup. It returns an empty string, and the
// item is parsed, for a value that is not a plain word (quoted, or with a
// comment after it).
func typeOf(raw []byte) (apiVersion, kind string) {
	var haveVersion, haveKind bool
	for len(raw) > 0 {
		var line []byte
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			line, raw = raw, nil
		}
		var rest []byte
		switch {
		case bytes.HasPrefix(line, []byte("- ")), bytes.HasPrefix(line, []byte("  ")) && len(line) > 2 && line[2] != ' ':
			rest = line[2:]
		default:
			continue
		}
		key, value, ok := bytes.Cut(rest, []byte(":"))
		if !ok {
			continue
		}
		switch {
		case !haveVersion && string(key) == "apiVersion":
			haveVersion = true
			apiVersion = plainWord(value)
		case !haveKind && string(key) == "kind":
			haveKind = true
			kind = plainWord(value)
		}
		if haveVersion && haveKind {
			return apiVersion, kind
		}
	}
	return apiVersion, kind
}

// plainWord returns v without surrounding spaces when it is one word of
// the characters an apiVersion or kind is made of, and "" otherwise.
func plainWord(v []byte) string {
	v = bytes.TrimSpace(v)
	for _, c := range v {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '/', c == '-', c == '_':
		default:
			return ""
		}
	}
	return string(v)
}

// mayAlias reports whether raw could hold a YAML anchor or alias, which
// might tie it to another item. Such items are parsed (and an alias to
// another item fails the parse, which sends the whole list to kyaml).
func mayAlias(raw []byte) bool {
	for i := 0; i < len(raw)-1; i++ {
		if c := raw[i]; c == '&' || c == '*' {
			if i > 0 {
				switch raw[i-1] {
				case ' ', '[', '{', ',', '\n':
				default:
					continue
				}
			}
			if n := raw[i+1]; n != ' ' && n != '\n' && n != '&' && n != '*' && n != '=' {
				return true
			}
		}
	}
	return false
}
