package trustdiff

import (
	"fmt"
	"strings"
)

// maxMarkdown is the most characters Markdown writes: under the 65,536 a
// GitHub comment holds.
const maxMarkdown = 65000

// MarkdownOptions shape the pull-request comment.
type MarkdownOptions struct {
	AllowUnexplained bool
	// Command is the command that shows the whole result, named when the
	// comment is cut.
	Command string
	// max overrides maxMarkdown (tests); 0 is maxMarkdown.
	max int
}

// markdownPlaces is how many places a line of the comment names when the
// same change is made in many: fewer than the table, a comment is read
// on a pull request (the JSON names every one).
const markdownPlaces = 3

// footerReserve is room kept for the note of what was cut.
const footerReserve = 2000

// Markdown writes r as a pull-request comment: the verdict and counts
// first, each section under <details> headed by its count of objects, the
// same change in many places one block, never over maxMarkdown characters;
// when cut (a block at a time), it says how many objects of which
// sections it left out and the command that shows all.
func Markdown(r Result, o MarkdownOptions) string {
	limit := o.max
	if limit <= 0 {
		limit = maxMarkdown
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### rotate-certs diff: %s\n\n%s\n", r.verdictLine(o.AllowUnexplained), r.Counts())
	var cut []string
	for _, s := range r.sections() {
		open := fmt.Sprintf("\n<details%s><summary>%s (%d)</summary>\n\n```text\n", openIf(s.title), s.title, len(s.entries))
		const closing = "```\n\n</details>\n"
		if b.Len()+len(open)+len(closing) > limit-footerReserve {
			cut = append(cut, cutWords(len(s.entries), len(s.entries), s.title))
			continue
		}
		b.WriteString(open)
		blocks, left := s.blocks(), 0
		for i, blk := range blocks {
			text := fence(strings.Join(blk.lines(markdownPlaces), "\n")) + "\n"
			if b.Len()+len(text)+len(closing) > limit-footerReserve {
				for _, rest := range blocks[i:] {
					left += rest.n
				}
				cut = append(cut, cutWords(left, len(s.entries), s.title))
				break
			}
			b.WriteString(text)
		}
		b.WriteString(closing)
	}
	if len(cut) > 0 {
		cmd := o.Command
		if cmd == "" {
			cmd = "rotate-certs diff"
		}
		fmt.Fprintf(&b, "\n**Cut to stay under %d characters.** Left out: %s. Run `%s` to see all.\n", limit, strings.Join(cut, ", "), fence(cmd))
	}
	return b.String()
}

// cutWords says how many of a section's objects were left out.
func cutWords(left, of int, title string) string {
	return fmt.Sprintf("%d of %d object(s) in %s", left, of, title)
}

// openIf opens the sections a reviewer must read: breaks, planted and
// warnings.
func openIf(title string) string {
	if title == "Breaks" || title == "Planted" || title == "Warnings" {
		return " open"
	}
	return ""
}

// fence keeps a line inside its code block: a backtick would end it.
func fence(s string) string { return strings.ReplaceAll(s, "`", "'") }
