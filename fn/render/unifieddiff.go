// unifiedDiff writes the unified diff of two texts, line by line, in
// the format `diff -u` and `git diff` print and `git apply` and `patch -p1`
// read: what `rotate-certs render --dry-run` shows instead of writing.
//
// It is written here rather than taken from a library: the line diff
// (Myers' O(ND) algorithm) and the hunk format fit in one small file, the
// small diff libraries for Go are either unmaintained or internal to the
// Go tools, and the output format is fixed by the tools that read it.
package render

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 3

// unifiedDiff returns the unified diff that turns before into after, with the
// header lines "--- a/<path>" ("--- /dev/null" for a text that is created)
// and "+++ b/<path>". It returns "" when the texts are equal.
func unifiedDiff(path, before, after string, created bool) string {
	if before == after && !created {
		return ""
	}
	a, b := lines(before), lines(after)
	from := "a/" + path
	if created {
		from = "/dev/null"
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ b/%s\n", from, path)
	for _, h := range hunks(edits(a, b)) {
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", span(h.a0, h.a1-h.a0), span(h.b0, h.b1-h.b0))
		for _, l := range h.lines {
			out.WriteString(l)
		}
	}
	return out.String()
}

// lines splits s after each newline; a last line without one keeps
// git's marker.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// span formats a hunk range: start,count with 1-based start, where an
// empty range names the line before it.
func span(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// op is one line of the edit script.
type op struct {
	kind byte // ' ', '-', '+'
	ai   int  // line index in a (for ' ' and '-')
	bi   int  // line index in b (for ' ' and '+')
	text string
}

// edits returns the shortest edit script from a to b (Myers 1986): the
// lines in order, each kept, deleted or inserted.
func edits(a, b []string) []op {
	// Common prefix and suffix are cut first: a render usually changes a
	// few lines of a long file.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []op
	for i := 0; i < pre; i++ {
		out = append(out, op{' ', i, i, a[i]})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf], pre, pre)...)
	for i := 0; i < suf; i++ {
		ai, bi := len(a)-suf+i, len(b)-suf+i
		out = append(out, op{' ', ai, bi, a[ai]})
	}
	return out
}

// myers is the greedy forward algorithm with the trace kept for the walk
// back; a0 and b0 offset the line indexes.
func myers(a, b []string, a0, b0 int) []op {
	n, m := len(a), len(b)
	max := n + m
	if max == 0 {
		return nil
	}
	off := max
	v := make([]int, 2*max+2)
	var trace [][]int
	for d := 0; d <= max; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an insertion
			} else {
				x = v[off+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, a0, b0, off)
			}
		}
	}
	return nil // not reached: d = n+m always ends
}

// backtrack walks the trace from the end back to the start, one edit per
// round, emitting the script in reverse and returning it in order.
func backtrack(trace [][]int, a, b []string, a0, b0, off int) []op {
	var rev []op
	x, y := len(a), len(b)
	for d := len(trace) - 1; d > 0; d-- {
		v := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v[off+pk]
		py := px - pk
		diagonal := px
		if pk == k-1 {
			diagonal++
		}
		for x > diagonal {
			x, y = x-1, y-1
			rev = append(rev, op{' ', a0 + x, b0 + y, a[x]})
		}
		if pk == k+1 {
			rev = append(rev, op{'+', a0 + px, b0 + py, b[py]})
		} else {
			rev = append(rev, op{'-', a0 + px, b0 + py, a[px]})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, op{' ', a0 + x, b0 + y, a[x]})
	}
	out := make([]op, len(rev))
	for i, o := range rev {
		out[len(rev)-1-i] = o
	}
	return out
}

type hunk struct {
	a0, a1, b0, b1 int
	lines          []string
}

// hunks groups the edit script into hunks with diffContext lines around
// each change, merging hunks whose context would touch.
func hunks(script []op) []hunk {
	var changes []int
	for i, o := range script {
		if o.kind != ' ' {
			changes = append(changes, i)
		}
	}
	var out []hunk
	for i := 0; i < len(changes); {
		start := max(changes[i]-diffContext, 0)
		j := i
		for j+1 < len(changes) && changes[j+1]-changes[j] <= 2*diffContext {
			j++
		}
		end := min(changes[j]+diffContext+1, len(script))
		h := hunk{a0: -1, b0: -1}
		aLines, bLines := 0, 0
		for _, o := range script[start:end] {
			switch o.kind {
			case ' ':
				aLines++
				bLines++
				if h.a0 < 0 {
					h.a0 = o.ai
				}
				if h.b0 < 0 {
					h.b0 = o.bi
				}
			case '-':
				aLines++
				if h.a0 < 0 {
					h.a0 = o.ai
				}
			case '+':
				bLines++
				if h.b0 < 0 {
					h.b0 = o.bi
				}
			}
			text := string(o.kind) + o.text
			if !strings.HasSuffix(o.text, "\n") {
				text += "\n\\ No newline at end of file\n"
			}
			h.lines = append(h.lines, text)
		}
		// A side with no line in the hunk starts where the other
		// side's position says.
		first := script[start]
		if h.a0 < 0 {
			h.a0 = first.ai
		}
		if h.b0 < 0 {
			h.b0 = first.bi
		}
		h.a1, h.b1 = h.a0+aLines, h.b0+bLines
		out = append(out, h)
		i = j + 1
	}
	return out
}
