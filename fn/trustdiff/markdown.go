package trustdiff

import (
	"fmt"
	"strings"
)

// MaxMarkdown is the most characters Markdown writes: under the 65,536 a
// GitHub comment holds.
const MaxMarkdown = 65000

// MarkdownOptions shape the pull-request comment.
type MarkdownOptions struct {
	AllowUnexplained bool
	// Command is the command that shows the whole result, named when the
	// comment is cut.
	Command string
	// Max overrides MaxMarkdown (tests); 0 is MaxMarkdown.
	Max int
}

// footerReserve is room kept for the note of what was cut.
const footerReserve = 2000

// Markdown writes r as a pull-request comment: the verdict and counts
// first, each section under <details>, never over MaxMarkdown characters;
// when cut, it says what it left out and the command that shows all.
func Markdown(r Result, o MarkdownOptions) string {
	limit := o.Max
	if limit <= 0 {
		limit = MaxMarkdown
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### rotate-certs diff: %s\n\n%s\n", r.Verdict(o.AllowUnexplained), r.Counts())
	var cut []string
	for _, s := range r.sections() {
		open := fmt.Sprintf("\n<details%s><summary>%s (%d)</summary>\n\n```text\n", openIf(s.title), s.title, len(s.lines))
		const closing = "```\n\n</details>\n"
		if b.Len()+len(open)+len(closing) > limit-footerReserve {
			cut = append(cut, fmt.Sprintf("%d line(s) of %s", len(s.lines), s.title))
			continue
		}
		b.WriteString(open)
		for i, l := range s.lines {
			l = fence(l) + "\n"
			if b.Len()+len(l)+len(closing) > limit-footerReserve {
				cut = append(cut, fmt.Sprintf("%d line(s) of %s", len(s.lines)-i, s.title))
				break
			}
			b.WriteString(l)
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
