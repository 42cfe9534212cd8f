//go:build devtools

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// goTestJSON runs the real `go test -json` over a throwaway module holding
// the given test file, and returns its event stream.
func goTestJSON(t *testing.T, testFile string) []byte {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m_test.go"), []byte(testFile), 0o644))
	cmd := exec.Command("go", "test", "-json", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOTOOLCHAIN=local")
	out, _ := cmd.Output() // a failing test exits 1; the stream is what matters
	require.NotEmpty(t, out)
	return out
}

func summarize(t *testing.T, stream []byte) (string, bool) {
	t.Helper()
	var b bytes.Buffer
	s, err := Summarize(bytes.NewReader(stream), &b)
	require.NoError(t, err)
	require.NoError(t, s.Write(&b))
	return b.String(), s.OK()
}

func TestSummaryNamesEverySkipWithItsReason(t *testing.T) {
	out, ok := summarize(t, goTestJSON(t, `package m
import "testing"
func TestPasses(t *testing.T) {}
func TestNeedsKpt(t *testing.T) { t.Skip("kpt is not installed: the kpt end-to-end tests need it") }
func TestTable(t *testing.T) {
	t.Run("with-podman", func(t *testing.T) { t.Skipf("podman not found (make tools installs it)") })
	t.Run("plain", func(t *testing.T) {})
}
`))
	require.True(t, ok, out)
	require.Contains(t, out, "2 skipped test(s):")
	require.Contains(t, out, "SKIP example.com/m TestNeedsKpt: m_test.go:4: kpt is not installed: the kpt end-to-end tests need it")
	require.Contains(t, out, "SKIP example.com/m TestTable/with-podman: m_test.go:6: podman not found (make tools installs it)")
	require.Contains(t, out, "ok   example.com/m")
	require.Contains(t, out, "PASS: 1 package(s) tested, 2 skipped test(s)")
	// The skip list comes after the package lines, where it cannot scroll away.
	require.Greater(t, strings.Index(out, "skipped test(s):"), strings.Index(out, "ok   example.com/m"))
}

func TestSummaryShowsFailuresAndFails(t *testing.T) {
	out, ok := summarize(t, goTestJSON(t, `package m
import "testing"
func TestBroken(t *testing.T) { t.Log("context line"); t.Fatal("the bundle lacks the old CA") }
func TestFine(t *testing.T) {}
`))
	require.False(t, ok)
	require.Contains(t, out, "FAIL example.com/m")
	require.Contains(t, out, "--- FAILED: example.com/m TestBroken")
	require.Contains(t, out, "the bundle lacks the old CA")
	require.Contains(t, out, "context line")
	require.NotContains(t, out, "--- FAILED: example.com/m TestFine")
}

func TestSummaryShowsBuildFailures(t *testing.T) {
	out, ok := summarize(t, goTestJSON(t, `package m
import "testing"
func TestX(t *testing.T) { undefinedThing() }
`))
	require.False(t, ok, out)
	require.Contains(t, out, "undefinedThing")
}

func TestSummaryOfNothingFails(t *testing.T) {
	out, ok := summarize(t, []byte("go: cannot find main module\n"))
	require.False(t, ok)
	require.Contains(t, out, "go: cannot find main module")
	require.Contains(t, out, "no test results")
}
