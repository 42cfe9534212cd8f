package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The threat model of docs/design/state-in-git.md promises that each row
// of its table is held by a test. This test holds the promise: every row
// names at least one test, and every test it names exists - a Go test or
// fuzz function of the package the row names (fn/rotate by default), a
// subtest's name in that package's tests, a golden case's directory.
func TestThreatModelRowsNameTests(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "design", "state-in-git.md"))
	require.NoError(t, err)
	_, table, found := strings.Cut(string(doc), "### What an edit can and cannot do")
	require.True(t, found, "state-in-git.md has the attacker-model table")
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| edit ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		tests := testRefs(strings.TrimSpace(cells[len(cells)-1]))
		require.NotEmpty(t, tests, "row %q names no test", line)
		for _, ref := range tests {
			requireTestExists(t, root, ref)
		}
		rows++
	}
	require.GreaterOrEqual(t, rows, 8, "the table lists the edits of data and of each memory annotation")
}

// testRef is a test a row names: its package directory and name.
type testRef struct{ pkg, name string }

var backticked = regexp.MustCompile("`([^`]+)`")

// testRefs reads the names of a row's test cell: names are fn/rotate's
// until a package ("`fn/x`") is named, which holds for the rest of the
// cell.
func testRefs(cell string) []testRef {
	var out []testRef
	pkg := "fn/rotate"
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		if strings.HasPrefix(m[1], "fn/") {
			pkg = m[1]
			continue
		}
		out = append(out, testRef{pkg, m[1]})
	}
	return out
}

func requireTestExists(t *testing.T, root string, ref testRef) {
	t.Helper()
	name, sub, _ := strings.Cut(ref.name, "/")
	var src strings.Builder
	files, err := filepath.Glob(filepath.Join(root, ref.pkg, "*_test.go"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		src.Write(b)
	}
	require.Regexp(t, `func `+regexp.QuoteMeta(name)+`\(`, src.String(), "%s: no test %s", ref.pkg, name)
	switch {
	case sub == "":
	case name == "TestGolden":
		_, err := os.Stat(filepath.Join(root, "testdata", "golden", sub, "input.yaml"))
		require.NoError(t, err, "golden case %s", sub)
	default:
		require.Contains(t, src.String(), `"`+strings.ReplaceAll(sub, "_", " ")+`"`, "%s: no subtest %s of %s", ref.pkg, sub, name)
	}
}
