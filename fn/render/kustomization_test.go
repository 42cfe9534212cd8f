package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/stretchr/testify/require"
)

// newTargetPackage stages the envoy-gateway example without its target's
// file, with the kustomization of testdata/render/new-target: a render
// creates the target in a file the kustomization does not list.
func newTargetPackage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(golden.Path("examples", "envoy-gateway"))))
	require.NoError(t, os.Remove(filepath.Join(dir, "trust.yaml")))
	k, err := os.ReadFile(golden.Path("testdata", "render", "new-target", "kustomization.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), k, 0o644))
	return dir
}

const createdTarget = "secret_envoy-gateway-system_envoy-gateway-trust.yaml"

func renderNewTarget(t *testing.T, dir string, o Options) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	o.Stdout, o.Stderr = &out, exit.NewPrinter(&errs, "rotate-certs render")
	err := Render(dir, o)
	o.Stderr.Error(err)
	return int(exit.CodeOf(err)), out.String(), errs.String()
}

// TestRenderWarnsAboutAnUnlistedNewFile: a render that creates the
// target's file in a directory whose kustomization does not list it warns
// naming both (the golden warning), writes the file and leaves the
// kustomization alone; a dry run warns the same and writes nothing.
func TestRenderWarnsAboutAnUnlistedNewFile(t *testing.T) {
	for _, dryRun := range []bool{false, true} {
		dir := newTargetPackage(t)
		before := e2eharness.Files(t, dir)
		code, stdout, stderr := renderNewTarget(t, dir, Options{DryRun: dryRun})
		require.Zero(t, code, stderr)
		var warnings []string
		for _, l := range strings.SplitAfter(stderr, "\n") {
			if strings.HasPrefix(l, "rotate-certs render: warning:") {
				warnings = append(warnings, strings.ReplaceAll(l, dir+string(filepath.Separator), "DIR/"))
			}
		}
		golden.Check(t, golden.Path("testdata", "render", "new-target", "expected-warning.txt"), []byte(strings.Join(warnings, "")))
		after := e2eharness.Files(t, dir)
		require.Equal(t, before["kustomization.yaml"], after["kustomization.yaml"], "the kustomization is not edited without --kustomization")
		if dryRun {
			require.Equal(t, before, after, "a dry run writes nothing")
			require.NotContains(t, stdout, "+++ b/kustomization.yaml")
			continue
		}
		require.Contains(t, stdout, "created "+filepath.Join(dir, createdTarget))
	}
}

// TestRenderKustomizationListsTheNewFile: with --kustomization the render
// appends the created file to resources: - comments, the list's indent and
// the other entries kept (golden) - and warns no more; the dry run prints
// that edit in its diff (golden) and writes nothing; a second render
// changes nothing.
func TestRenderKustomizationListsTheNewFile(t *testing.T) {
	dir := newTargetPackage(t)
	before := e2eharness.Files(t, dir)
	code, stdout, stderr := renderNewTarget(t, dir, Options{DryRun: true, Kustomization: true})
	require.Zero(t, code, stderr)
	require.Equal(t, before, e2eharness.Files(t, dir), "a dry run writes nothing")
	require.NotContains(t, stderr, "warning: ")
	diffOf := stdout // paths from dir, which is absolute
	start := strings.Index(diffOf, "--- a/kustomization.yaml")
	require.GreaterOrEqual(t, start, 0, "the dry run shows the kustomization's edit:\n%s", stdout)
	end := strings.Index(diffOf[start+1:], "\n--- ")
	golden.Check(t, golden.Path("testdata", "render", "new-target", "expected-dry-run.diff"), []byte(diffOf[start:start+1+end+1]))

	code, stdout, stderr = renderNewTarget(t, dir, Options{Kustomization: true})
	require.Zero(t, code, stderr)
	require.NotContains(t, stderr, "warning: ")
	require.Contains(t, stdout, "wrote "+filepath.Join(dir, "kustomization.yaml")+"\n")
	k, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	require.NoError(t, err)
	golden.Check(t, golden.Path("testdata", "render", "new-target", "expected-kustomization.yaml"), k)

	code, stdout, stderr = renderNewTarget(t, dir, Options{Kustomization: true})
	require.Zero(t, code, stderr)
	require.Empty(t, stdout, "nothing left to write")
}

// TestRenderKustomizationAsWritten: a kustomization with CRLF line ends
// keeps them, each of the three names kustomize reads is found, one that
// already lists the file is left alone, and one that defines a key twice is
// refused with --kustomization (naming the file; nothing is written).
func TestRenderKustomizationAsWritten(t *testing.T) {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		dir := newTargetPackage(t)
		k, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		require.NoError(t, err)
		require.NoError(t, os.Remove(filepath.Join(dir, "kustomization.yaml")))
		crlf := bytes.ReplaceAll(k, []byte("\n"), []byte("\r\n"))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), crlf, 0o644))
		code, _, stderr := renderNewTarget(t, dir, Options{Kustomization: true})
		require.Zero(t, code, stderr)
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, string(crlf)+"  - "+createdTarget+"\r\n", strings.Replace(string(got), "  - "+createdTarget+"\r\n", "", 1)+"  - "+createdTarget+"\r\n", name)
		require.Equal(t, strings.Count(string(crlf), "\n")+1, strings.Count(string(got), "\r\n"), "%s: every line ends in CRLF:\n%q", name, got)
	}

	dir := newTargetPackage(t)
	k := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(k)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(k, append(data, []byte("resources:\n- other.yaml\n")...), 0o644))
	before := e2eharness.Files(t, dir)
	code, stdout, stderr := renderNewTarget(t, dir, Options{Kustomization: true})
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, k)
	require.Contains(t, stderr, "resources")
	require.Equal(t, before, e2eharness.Files(t, dir), "nothing is written")
}
