package docs

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Code says its rules in the project's own words, or cites the project's
// own documents (docs/design/contract.md and its section names). It never
// cites a document or a tracker that is not in the repository, and its
// comments state the current rule, not a history of measurements.
var (
	// outsideCitation matches a citation of something outside the
	// repository, in a document or in code: the contract under its old
	// external name (in capitals: a URL ending in functions-spec.md is not
	// it) or its numbered sections and rules, the shared
	// directory beside the repository, or an issue number ("issue 7",
	// "issue #7", "(issues 3)"). "re-issue 3 leaves" and "kubeadm issues
	// 365-day certificates" are not citations. It is the one pattern of
	// both checks (TestCodeCitesOnlyTheRepository over code,
	// TestNoReferenceOutsideRepository over the documentation).
	outsideCitation = regexp.MustCompile(`\bSPEC\.md\b|\bSPEC sections?\b|(?i:\bspec\s+(?:sections?|rules?)\s+\d)` +
		`|\.\./shared\b|/work/shared\b` +
		`|(?i:(?:^|[^-\w])issue\s*#?\s*\d+\b|\bissues\s*#\s*\d+|\(issues?\s+#?\d+\))`)
	// datedMeasurement matches a comment that records a past measurement:
	// a size or time it "was", or what was "measured" on a given date.
	datedMeasurement = regexp.MustCompile(`(?i)\bwas` + ` \d+(\.\d+)?\s?(KiB|MiB|GiB|KB|MB|GB|ms|µs|ns)\b|\bmeasured` + `\b.*\b20\d\d-\d\d-\d\d\b`)
	// commentStart finds where a line comment begins in Go, shell, YAML
	// and Makefiles.
	commentStart = regexp.MustCompile(`(^|\s)(//|#)`)
)

// codeFile reports whether a tracked file is code or configuration the
// rule applies to: Go, shell, YAML and Makefiles.
func codeFile(rel string) bool {
	if strings.HasPrefix(filepath.ToSlash(rel), "test/docs/") {
		return false // the checkers themselves: their tables hold what they refuse
	}
	base := filepath.Base(rel)
	switch {
	case base == "Makefile", base == "Dockerfile", strings.HasSuffix(base, ".mk"):
		return true
	}
	switch filepath.Ext(base) {
	case ".go", ".sh", ".bash", ".yaml", ".yml":
		return true
	}
	return false
}

// trackedFiles lists the files git tracks in the repository at root.
func trackedFiles(t *testing.T, root string) []string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not on PATH: cannot list the tracked files")
	}
	cmd := exec.Command(git, "ls-files", "-z")
	cmd.Dir = root
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		// A listing that fails must fail the test, not pass it as
		// nothing to check.
		t.Fatalf("git ls-files in %s: %v: %s", root, err, stderr.String())
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

// TestCodeCitesOnlyTheRepository fails when a tracked Go, shell, YAML or
// Makefile file cites a document or an issue number outside the
// repository, or when one of its comments records a dated measurement
// instead of the current rule.
func TestCodeCitesOnlyTheRepository(t *testing.T) {
	root := repoRoot(t)
	checked := 0
	for _, rel := range trackedFiles(t, root) {
		if !codeFile(rel) {
			continue
		}
		f, err := os.Open(filepath.Join(root, rel))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		require.NoError(t, err)
		checked++
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if m := outsideCitation.FindString(line); m != "" {
				t.Errorf("%s:%d: %q cites something outside the repository; say the rule in the project's own words or cite docs/design/contract.md by section name", rel, n, m)
			}
			if loc := commentStart.FindStringIndex(line); loc != nil {
				if m := datedMeasurement.FindString(line[loc[0]:]); m != "" {
					t.Errorf("%s:%d: comment %q records a past measurement; state the current rule", rel, n, m)
				}
			}
		}
		require.NoError(t, sc.Err(), rel)
		require.NoError(t, f.Close())
	}
	require.Positive(t, checked, "no Go, shell, YAML or Makefile among the tracked files")
	t.Logf("%d files checked", checked)
}

func TestOutsideCitationPatterns(t *testing.T) {
	for line, want := range map[string]bool{
		"// see " + "SPEC" + ".md":                     true,
		"// as " + "SPEC" + " section 5 says":          true,
		"see the " + "SPEC" + " section on restarts":   true,
		"# the nginx peer (" + "issue" + " 6)":         true,
		"// fixed in " + "issue" + " #12":              true,
		"fixed in " + "issue" + " 14":                  true,
		"Issue" + " #7":                                true,
		"closes " + "issues" + " #3 and #4":            true,
		"../" + "shared/KRM-NOTES.md":                  true,
		"/work/" + "shared/STYLE.md":                   true,
		"// docs/design/contract.md, Restart rules":    false,
		"// spec.clusterAPI sets the expiry fields":    false,
		"// the CA that issued it (issued 2025-01-01)": false,
		"kubeadm issues 365-day certificates":          false,
		"re-issue 3 leaves":                            false,
		"the spec of rule 3":                           false,
		"docs/design/contract.md":                      false,
		"see spec" + " rule 4":                         true,
		"api-conventions/functions-spec.md":            false,
	} {
		require.Equal(t, want, outsideCitation.MatchString(line), line)
	}
	for line, want := range map[string]bool{
		"// the peak " + "was" + " 128 MiB":                      true,
		"// " + "measured" + " at 2.1 s on 2026-11-02":           true,
		"// the cap is 256 MiB":                                  false,
		"// ca-2025 expires 2027-06-01: it has left every copy.": false,
	} {
		require.Equal(t, want, datedMeasurement.MatchString(line), line)
	}
}
