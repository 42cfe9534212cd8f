package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// repoRoot is the repository's top directory, two levels above this
// package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the repository root (with go.mod) must be two levels above test/docs")
	return root
}

// markdownFiles lists README.md, every Markdown file under docs/, and the
// README of every example, relative to root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	for _, dir := range []string{"docs", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if os.IsNotExist(err) {
				return filepath.SkipDir
			}
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".md") {
				rel, err := filepath.Rel(root, path)
				if err != nil {
					return err
				}
				files = append(files, rel)
			}
			return nil
		})
		require.NoError(t, err)
	}
	return files
}

var (
	// inlineLink matches [text](target) and ![alt](target); the target
	// ends at whitespace or the closing parenthesis.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// refLink matches a reference definition: [name]: target
	refLink   = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s*(\S+)`)
	heading   = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	fence     = regexp.MustCompile("(?ms)^\\s*(```|~~~).*?^\\s*(```|~~~)\\s*$")
	htmlLinks = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	// linkInHeading is a link inside a heading, whose text counts.
	linkInHeading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// anchors returns the heading anchors GitHub gives a Markdown file.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		slug := slugify(m[1])
		if n := seen[slug]; n > 0 {
			out[slug+"-"+itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	for _, m := range htmlLinks.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// slugify is GitHub's heading anchor: lower case, markup and punctuation
// dropped (except '-' and '_'), spaces turned into '-'.
func slugify(h string) string {
	h = linkInHeading.ReplaceAllString(h, "$1") // links keep their text
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestRelativeLinksResolve checks every relative link of the
// documentation: the file or directory exists inside the repository, and
// an #anchor names a heading of the Markdown file it points to.
func TestRelativeLinksResolve(t *testing.T) {
	root := repoRoot(t)
	files := markdownFiles(t, root)
	require.Contains(t, files, "README.md")
	checked, anchored := 0, 0
	for _, rel := range files {
		raw, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		text := fence.ReplaceAllString(string(raw), "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range refLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			dest := filepath.Join(root, rel) // a bare #anchor points into the file itself
			if path != "" {
				dest = filepath.Join(filepath.Dir(filepath.Join(root, rel)), filepath.FromSlash(path))
			}
			inside, err := filepath.Rel(root, dest)
			if err != nil || strings.HasPrefix(inside, "..") {
				t.Errorf("%s: link %q leaves the repository", rel, target)
				continue
			}
			st, err := os.Stat(dest)
			if err != nil {
				t.Errorf("%s: link %q: %s does not exist", rel, target, inside)
				continue
			}
			if anchor == "" || st.IsDir() || !strings.HasSuffix(dest, ".md") {
				continue
			}
			body, err := os.ReadFile(dest)
			require.NoError(t, err)
			anchored++
			if !anchors(string(body))[anchor] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", rel, target, inside, anchor)
			}
		}
	}
	// A link pattern that stops matching would check nothing and pass.
	require.Positive(t, checked, "no relative link found in %d Markdown files", len(files))
	require.Positive(t, anchored, "no relative link with an #anchor into a Markdown file found")
	t.Logf("%d relative links in %d files checked, %d of them with an anchor", checked, len(files), anchored)
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"Two commands":                              "two-commands",
		"`rotate-certs check [PATH...]`":            "rotate-certs-check-path",
		"JSON schema (`check -o json`)":             "json-schema-check--o-json",
		"Cluster API, etcdadm and EKS Anywhere":     "cluster-api-etcdadm-and-eks-anywhere",
		"State lives in [git](https://git-scm.com)": "state-lives-in-git",
	} {
		require.Equal(t, want, slugify(in), in)
	}
}

func TestAnchorsNumberRepeatedHeadings(t *testing.T) {
	a := anchors("# Usage\n## Example\n```\n# not a heading\n```\n## Example\n")
	require.True(t, a["usage"])
	require.True(t, a["example"])
	require.True(t, a["example-1"])
	require.False(t, a["not-a-heading"])
}

// TestNoReferenceOutsideRepository checks that the documentation cites
// only what a reader of the repository can open: the rules are in
// docs/design/contract.md, not in a file or tracker that is not here.
func TestNoReferenceOutsideRepository(t *testing.T) {
	root := repoRoot(t)
	for _, rel := range markdownFiles(t, root) {
		raw, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		for i, line := range strings.Split(string(raw), "\n") {
			if m := outsideCitation.FindString(line); m != "" {
				t.Errorf("%s:%d: %q cites something that is not in the repository: say it in the project's own words or link a file of the repository", rel, i+1, m)
			}
		}
	}
}
