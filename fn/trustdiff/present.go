package trustdiff

import (
	"fmt"
	"strings"
)

// How the table and the markdown comment say where each change is. Every
// line names its file. A repository of many clusters makes the same change
// once per cluster - the same object name and field, the same CAs added,
// removed and kept with the same whys, the same readers by name - and
// those are one block, which names how many places and the first few of
// them; the JSON keeps one entry per object. Section counts count
// objects, not lines.

// entry is one object of the result in words: what is said of it apart
// from where it is (text: a first line, then lines under it), and where
// (place: its file; for a break, the certificate's and the trust
// object's).
type entry struct {
	text  []string
	place string
	// alone is said after the place when no other entry says the same
	// (a break's other places that hold its certificate: in a block of
	// many, the places say it).
	alone string
}

// section is one part of the result: a title and its entries, one per
// object.
type section struct {
	title   string
	entries []entry
}

// block is the entries of a section that say the same thing, in the order
// of the first: n objects, at places (each place once, in order).
type block struct {
	text   []string
	places []string
	n      int
	alone  string
}

// blocks groups s's entries by what they say.
func (s section) blocks() []block {
	var out []block
	at := map[string]int{}
	seen := map[string]bool{}
	for _, e := range s.entries {
		k := strings.Join(e.text, "\n")
		i, ok := at[k]
		if !ok {
			i, at[k] = len(out), len(out)
			out = append(out, block{text: e.text, alone: e.alone})
		}
		out[i].n++
		if e.place != "" && !seen[k+"\x00"+e.place] {
			seen[k+"\x00"+e.place] = true
			out[i].places = append(out[i].places, e.place)
		}
	}
	return out
}

// lines are the block's lines: the first with its places (at most show of
// them named), the rest indented under it.
func (b block) lines(show int) []string {
	out := make([]string, 0, len(b.text))
	alone := ""
	if b.n == 1 {
		alone = b.alone
	}
	out = append(out, b.text[0]+where(b.places, show, alone))
	for _, l := range b.text[1:] {
		out = append(out, "  "+l)
	}
	return out
}

// where words places after a line: " (in FILE)" (then alone), or " (in N
// places: A, B and N-2 more)" naming at most show of them; "" for none.
func where(places []string, show int, alone string) string {
	switch n := len(places); {
	case n == 0:
		return ""
	case n == 1:
		return " (in " + places[0] + alone + ")"
	case n <= show:
		return fmt.Sprintf(" (in %d places: %s and %s)", n, strings.Join(places[:n-1], ", "), places[n-1])
	default:
		return fmt.Sprintf(" (in %d places: %s and %d more)", n, strings.Join(places[:show], ", "), n-show)
	}
}
