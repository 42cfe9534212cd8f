package resio

import (
	"bytes"
	"strings"
)

// openScanner finds lines that leave a quoted scalar or a flow collection
// open. Such a value continues on the next lines, and YAML lets those
// lines start at any column, so a continuation line can look like a
// top-level key or a new item to a line splitter. The fast path does not
// follow them: a list with one goes to kyaml.
//
// Block scalars ("|" and ">") are followed: their content lines, indented
// deeper than the key that holds them, are text, not YAML, and may hold
// unbalanced quotes and brackets (scripts, JSON documents).
type openScanner struct {
	blockIndent int // content of a block scalar is indented deeper than this; -1 outside one
}

func newOpenScanner() *openScanner { return &openScanner{blockIndent: -1} }

// leavesOpen reports whether line (without its newline) leaves a quoted
// scalar or flow collection open.
func (s *openScanner) leavesOpen(line []byte) bool {
	indent := leadingSpaces(line)
	if s.blockIndent >= 0 {
		if indent == len(line) || indent > s.blockIndent {
			return false // block scalar content (or a blank line in it)
		}
		s.blockIndent = -1
	}
	// Most lines hold none of the characters that open anything.
	if bytes.IndexAny(line, `"'[{|>`) < 0 {
		return false
	}
	open, blockAt := scanLine(line, indent)
	if blockAt >= 0 {
		s.blockIndent = blockAt
	}
	return open
}

// scanLine reads one line of YAML from its first non-space byte at
// indent. It returns open when a quoted scalar or flow collection is still
// open at the end of the line, and blockAt >= 0 when the line starts a
// block scalar: the indentation its content must exceed (the column of
// the key or sequence entry that holds it). Erring high is safe: content
// lines then get scanned too, and at worst a list goes to kyaml.
func scanLine(line []byte, indent int) (open bool, blockAt int) {
	depth := 0        // flow collection nesting
	atStart := true   // at the start of a node: a quote or bracket here opens one
	nodeCol := indent // column of the innermost node at depth 0 (key, entry or value)
	for i := indent; i < len(line); {
		c := line[i]
		spaceAfter := i+1 == len(line) || line[i+1] == ' '
		switch {
		case c == ' ':
			i++
			continue
		case c == '#' && (i == 0 || line[i-1] == ' '):
			return depth > 0, -1 // a comment ends the line
		case atStart && (c == '"' || c == '\''):
			if depth == 0 {
				nodeCol = i
			}
			end := closingQuote(line, i)
			if end < 0 {
				return true, -1
			}
			i = end + 1
			atStart = false
			continue
		case atStart && (c == '!' || c == '&'):
			// A tag or an anchor: the node it belongs to comes after it.
			for i < len(line) && line[i] != ' ' {
				i++
			}
			continue
		case atStart && depth == 0 && c == '-' && spaceAfter:
			nodeCol = i
		case atStart && depth == 0 && (c == '|' || c == '>'):
			return false, nodeCol
		case atStart && (c == '[' || c == '{'):
			depth++
		case depth > 0 && (c == ']' || c == '}'):
			depth--
			atStart = false
		case depth > 0 && c == ',':
			atStart = true
		case c == ':' && (spaceAfter || (depth > 0 && strings.IndexByte(",]}", line[i+1]) >= 0)):
			atStart = true
		case c == '?' && atStart && spaceAfter:
		default:
			if atStart && depth == 0 {
				nodeCol = i
			}
			atStart = false
		}
		i++
	}
	return depth > 0, -1
}

// closingQuote returns the index of the quote that closes the scalar
// opened at line[start], or -1 when it does not close on this line.
// Double-quoted scalars escape with a backslash, single-quoted ones by
// doubling the quote.
func closingQuote(line []byte, start int) int {
	q := line[start]
	for i := start + 1; i < len(line); i++ {
		switch {
		case q == '"' && line[i] == '\\':
			i++
		case line[i] == q && q == '\'' && i+1 < len(line) && line[i+1] == '\'':
			i++
		case line[i] == q:
			return i
		}
	}
	return -1
}
