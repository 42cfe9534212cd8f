package render

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/synth"
	"github.com/stretchr/testify/require"
)

// renderAt is the render time of these tests: some examples' CAs and
// machines come due within their warning windows then, so that packages
// warn.
var renderAt = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// exampleFleet writes a monorepo of clusters under dir, each holding a
// copy of every example that is a package (a rotation-policy.yaml at its
// top), and returns the package directories of the first cluster.
func exampleFleet(t *testing.T, dir string, clusters int) []string {
	t.Helper()
	entries, err := os.ReadDir(golden.Path("examples"))
	require.NoError(t, err)
	packages := map[string]string{}
	for _, e := range entries {
		src := golden.Path("examples", e.Name())
		if _, err := os.Stat(filepath.Join(src, "rotation-policy.yaml")); err == nil {
			packages[e.Name()] = src
		}
	}
	require.Greater(t, len(packages), 5, "the examples that are packages")
	require.NoError(t, synth.WriteFleet(dir, clusters, packages))
	var first []string
	for name := range packages {
		first = append(first, path.Join(synth.FleetCluster(0), name))
	}
	sort.Strings(first)
	return first
}

// snapshot returns every file under dir by its slash-separated path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	return files
}

// differ returns the paths whose text differs between two snapshots, or
// that only one holds.
func differ(a, b map[string]string) []string {
	var paths []string
	for p, text := range a {
		if other, ok := b[p]; !ok || other != text {
			paths = append(paths, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths
}

// renderRun is what one render of a tree gave.
type renderRun struct {
	code           int
	stdout, stderr string
	files          map[string]string
}

// renderWith renders dir on workers goroutines; with one, on one core
// (GOMAXPROCS=1), so that the tree is read one file after the other too.
func renderWith(t *testing.T, dir string, workers int) renderRun {
	t.Helper()
	if workers == 1 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	var stdout, stderr bytes.Buffer
	log := exit.NewPrinter(&stderr, "rotate-certs render")
	err := Render(dir, Options{At: renderAt, Now: time.Now, Workers: workers, Stdout: &stdout, Stderr: log})
	log.Error(err) // as the command prints it
	return renderRun{code: int(exit.CodeOf(err)), stdout: stdout.String(), stderr: stderr.String(), files: snapshot(t, dir)}
}

// TestParallelRenderIsSerialRender renders a generated monorepo (every
// example that is a package, in clusters of varied names) one package
// after the other on one core (GOMAXPROCS=1) and on 8 workers on every
// core, from the same files at the same path: the files written, stdout and stderr are the same, byte for byte -
// packages that warn, create files, leave their kustomization out of date
// or fail included.
func TestParallelRenderIsSerialRender(t *testing.T) {
	for _, tc := range []struct {
		name   string
		breaks func(t *testing.T, dir string, pkgs []string)
		code   int
	}{
		{name: "every package renders", code: 0},
		{name: "some packages fail", code: 1, breaks: func(t *testing.T, dir string, pkgs []string) {
			for i, p := range pkgs[:3] {
				file := filepath.Join(dir, filepath.FromSlash(p), "rotation-policy.yaml")
				if i == 1 {
					file = filepath.Join(dir, filepath.FromSlash(p), "dup.yaml")
				}
				require.NoError(t, os.WriteFile(file, []byte(brokenPackage[i%2]), 0o644))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pristine, work := t.TempDir(), t.TempDir()
			pkgs := exampleFleet(t, pristine, 4)
			if tc.breaks != nil {
				tc.breaks(t, pristine, pkgs)
			}
			var runs []renderRun
			for _, workers := range []int{1, 8} {
				require.NoError(t, os.RemoveAll(work))
				require.NoError(t, os.CopyFS(work, os.DirFS(pristine)))
				runs = append(runs, renderWith(t, work, workers))
			}
			serial, parallel := runs[0], runs[1]
			require.Equal(t, tc.code, serial.code, serial.stderr)
			require.Contains(t, serial.stderr, "warning", "packages warn")
			if tc.code == 0 {
				require.Contains(t, serial.stdout, "created ", "packages create files")
			}
			require.Equal(t, serial.code, parallel.code)
			require.Equal(t, serial.stdout, parallel.stdout)
			require.Equal(t, serial.stderr, parallel.stderr)
			require.Empty(t, differ(serial.files, parallel.files), "files written")
		})
	}
}

// brokenPackage are two ways a package fails: a policy the function
// refuses, and a file that defines a key twice.
var brokenPackage = [2]string{
	"apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n  name: broken\nspec:\n  trustBundles:\n  - name: b\n    sources: []\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: twice\n  namespace: default\ndata:\n  a: \"1\"\ndata:\n  a: \"2\"\n",
}

// TestRenderWritesNothingWhenALaterPackageFails: the first package of two
// would write files, the second fails - the function refuses its policy,
// or one of its files defines a key twice: nothing is written, in either
// package, whatever the number of workers.
func TestRenderWritesNothingWhenALaterPackageFails(t *testing.T) {
	for _, broken := range []struct{ name, file, text string }{
		{"the function refuses the second policy", "rotation-policy.yaml", brokenPackage[0]},
		{"a file of the second package defines a key twice", "dup.yaml", brokenPackage[1]},
	} {
		for _, workers := range []int{1, 2} {
			t.Run(broken.name+"/workers="+string(rune('0'+workers)), func(t *testing.T) {
				dir := t.TempDir()
				require.NoError(t, os.CopyFS(filepath.Join(dir, "a"), os.DirFS(golden.Path("examples", "envoy-gateway"))))
				require.NoError(t, os.CopyFS(filepath.Join(dir, "b"), os.DirFS(golden.Path("examples", "multi-signer"))))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "b", broken.file), []byte(broken.text), 0o644))
				before := snapshot(t, dir)
				run := renderWith(t, dir, workers)
				require.Equal(t, 1, run.code, run.stderr)
				require.Empty(t, run.stdout)
				require.Contains(t, run.stderr, "1 of 2 packages failed; nothing was written")
				require.Empty(t, differ(before, run.files), "nothing written")

				// Without the broken file, the first package writes.
				require.NoError(t, os.Remove(filepath.Join(dir, "b", broken.file)))
				require.True(t, strings.Contains(renderWith(t, dir, workers).stdout, "wrote "+filepath.Join(dir, "a")),
					"the first package writes once the second no longer fails")
			})
		}
	}
}
