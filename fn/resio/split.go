package resio

// The fast path of function mode reads and writes ResourceLists without re-encoding what the
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

// chunk is one item's text, input[start:end]: any comment lines before it,
// then the lines of the "- " entry, each newline-terminated. Chunks are
// offsets, not copies: a list of a million tiny items costs a few bytes
// per item on top of its text.
type chunk struct {
	start, end uint32
}

// listText is a ResourceList split at the text level. Its chunks index
// data, which ends in a newline.
type listText struct {
	data           []byte
	apiVersion     string
	kind           string
	items          []chunk
	functionConfig []byte // the "functionConfig:" key and its value lines
}

// raw returns item i's text.
func (lt *listText) raw(i int) []byte { return lt.data[lt.items[i].start:lt.items[i].end] }

var topLevelKeys = map[string]bool{"apiVersion": true, "kind": true, "items": true, "functionConfig": true, "results": true}

// maxInput is the largest list the splitter's offsets can address.
const maxInput = 1<<32 - 1

// split cuts a canonical ResourceList into its parts.
func split(data []byte) (*listText, error) {
	if at, why := unreadable(data); at >= 0 {
		return nil, notCanonical(1+bytes.Count(data[:at], []byte("\n")), why)
	}
	if len(data) >= maxInput {
		return nil, notCanonical(0, "larger than 4 GiB")
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		// The last line break is part of a block scalar's value; kyaml
		// reads the list as it is (found by FuzzFastPathMatchesKyaml).
		return nil, notCanonical(1+bytes.Count(data, []byte("\n")), "no line break at the end")
	}
	sp := &splitter{out: &listText{data: data, items: make([]chunk, 0, estimateItems(data))},
		pending: -1, scanner: newOpenScanner(), seen: map[string]bool{}}
	n := 0 // line number
	for off := 0; off < len(data); {
		n++
		i := bytes.IndexByte(data[off:], '\n')
		line := data[off : off+i+1]
		at := off
		off += i + 1
		if sp.scanner.leavesOpen(line[:len(line)-1]) {
			return nil, notCanonical(n, "a quoted scalar or flow collection continues on the next line")
		}
		if why := sp.line(line, at); why != "" {
			return nil, notCanonical(n, why)
		}
	}
	return sp.finish(n)
}

// splitter is what split knows of a list so far.
type splitter struct {
	out     *listText
	section string // the top-level key being read
	inItem  bool
	pending int // offset of the first comment line waiting for the next item; -1 for none
	fcStart int // the functionConfig section
	fcEnd   int
	scanner *openScanner
	seen    map[string]bool // top-level keys
}

// line reads one line (with its line break) at offset at, and says why
// the list is not canonical, or "".
func (sp *splitter) line(line []byte, at int) string {
	switch {
	case isBlank(line):
		if sp.pending >= 0 {
			// A comment, then a blank line: YAML may make it the foot
			// of the item before rather than the head of the next.
			return "a blank line after a comment between items"
		}
	case line[0] == '#':
		if sp.section == "items" && sp.pending < 0 {
			sp.pending = at
		}
	case bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("...")):
		if sp.section != "" {
			return "a second YAML document"
		}
	case line[0] == ' ':
		return sp.indented()
	case line[0] == '-':
		return sp.entry(line, at)
	default:
		return sp.topLevelKey(line, at)
	}
	return ""
}

// indented reads a line that starts with a space.
func (sp *splitter) indented() string {
	switch sp.section {
	case "items":
		if !sp.inItem {
			return "items indented under items: (kyaml writes them at column 0)"
		}
		// Comments at column 0 that more of the item follows are
		// inside it, not before the next item.
		sp.pending = -1
	case "functionConfig", "results":
	default:
		return "an indented line under " + sp.section + ":"
	}
	return ""
}

// entry reads a line that starts with "-": a new item.
func (sp *splitter) entry(line []byte, at int) string {
	if sp.section == "results" {
		return "" // a previous run's results: replaced by this run's
	}
	if sp.section != "items" || (len(line) > 1 && line[1] != ' ' && line[1] != '\n') {
		return "a sequence entry outside items:"
	}
	start := at
	if sp.pending >= 0 {
		start, sp.pending = sp.pending, -1
	}
	sp.flush(start)
	sp.out.items = append(sp.out.items, chunk{start: uint32(start)})
	sp.inItem = true
	return ""
}

// flush ends the item being read at offset at.
func (sp *splitter) flush(at int) {
	if sp.inItem {
		sp.out.items[len(sp.out.items)-1].end = uint32(at)
		sp.inItem = false
	}
}

// topLevelKey reads a key of the ResourceList.
func (sp *splitter) topLevelKey(line []byte, at int) string {
	sp.flush(at)
	if sp.section == "functionConfig" {
		sp.fcEnd = at
	}
	if sp.pending >= 0 {
		return "comments between the last item and the next key"
	}
	key, value, ok := strings.Cut(strings.TrimRight(string(line), "\n"), ":")
	if !ok || !topLevelKeys[key] || value != "" && value[0] != ' ' {
		// "kind:ResourceList" is one plain scalar to YAML (found by
		// FuzzFastPathMatchesKyaml).
		return "not a ResourceList key"
	}
	if sp.seen[key] {
		// kyaml reads the first of duplicate keys; the splitter would
		// read both.
		return key + " appears twice"
	}
	sp.seen[key] = true
	value = strings.TrimSpace(value)
	sp.section = key
	switch key {
	case "apiVersion", "kind":
		// A plain word such as config.kubernetes.io/v1 or ResourceList;
		// anything else (a quote, a comment, "a: b", which yaml.v3 refuses:
		// found by FuzzProcess) goes to kyaml's reader.
		if !isPlainWord(value) {
			return key + " is not a plain word"
		}
		if key == "kind" {
			sp.out.kind = value
		} else {
			sp.out.apiVersion = value
		}
	case "results":
		if value != "" && value != "[]" {
			return "results written in flow style"
		}
	case "items":
		if value != "" && value != "[]" {
			return "items written in flow style"
		}
	case "functionConfig":
		if value != "" {
			return "functionConfig written in flow style"
		}
		sp.fcStart = at
	}
	return ""
}

// isPlainWord reports whether v is a non-empty run of letters, digits and
// ".", "/", "_", "-": an apiVersion or kind the splitter and the item
// reader may take as written.
func isPlainWord[T string | []byte](v T) bool {
	if len(v) == 0 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '/' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// finish ends the list after its last line, n.
func (sp *splitter) finish(n int) (*listText, error) {
	data := sp.out.data
	sp.flush(len(data))
	if sp.section == "functionConfig" {
		sp.fcEnd = len(data)
	}
	if sp.pending >= 0 {
		return nil, notCanonical(n, "comments after the last item")
	}
	if sp.out.kind != "ResourceList" {
		return nil, notCanonical(0, "no top-level kind: ResourceList")
	}
	sp.out.functionConfig = data[sp.fcStart:sp.fcEnd]
	return sp.out, nil
}

// estimateItems counts the lines that start an item, to size the chunk
// list once: "\n- " is a new entry at column 0 (results entries count too,
// which only over-sizes a little).
func estimateItems(data []byte) int {
	return bytes.Count(data, []byte("\n-"))
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
