package resio

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

// gitRun runs git in dir and fails the test on an error.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// committed writes files (path: text) into a new git repository, commits
// them, and returns its directory and top.
func committed(t *testing.T, files map[string]string) (dir, top string) {
	t.Helper()
	dir = t.TempDir()
	for rel, text := range files {
		write(t, dir, rel, text)
	}
	gitRun(t, dir, "init", "-q")
	gitRun(t, dir, "add", "-A", "-f")
	gitRun(t, dir, "commit", "-q", "-m", "c")
	top, _, err := GitTop(dir)
	require.NoError(t, err)
	return dir, top
}

// readSummary is what a reading gave, with every path below root.
type readSummary struct {
	Items    []string // path annotation, then the resource's text
	Problems []string
	Notes    []string
}

func summarize(t *testing.T, root string, set *Resources) readSummary {
	t.Helper()
	var s readSummary
	strip := func(m string) string { return filepath.ToSlash(m[len(root)+1:]) }
	for _, it := range set.Items {
		p := it.GetAnnotations(kioutil.PathAnnotation)[kioutil.PathAnnotation]
		s.Items = append(s.Items, strip(p)+"\n"+it.MustString())
	}
	for _, p := range set.Problems {
		s.Problems = append(s.Problems, p.Message)
	}
	s.Notes = append(s.Notes, set.Notes...)
	return s
}

// TestRevisionReadsAsDirectory: a commit read into memory gives what
// ReadPaths gives on the same tree checked out - the same resources with
// the same paths below the top, the same problems and notes - for every
// rule of a walk: hidden files and directories, .krmignore at the top and
// deeper, extensions, lists, duplicate keys, templates, a path named that
// is a file or a directory below the top.
func TestRevisionReadsAsDirectory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cm := func(name string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n" }
	files := map[string]string{
		"a.yaml": cm("a"), "b.yml": cm("b"), "c.json": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`,
		"notes.txt": "not read", ".hidden.yaml": cm("hidden"), ".github/x.yaml": cm("x"), "pkg/.expected/y.yaml": cm("y"),
		".krmignore": "ignored/\n", "ignored/i.yaml": cm("i"), "pkg/.krmignore": "skip.yaml\n", "pkg/skip.yaml": cm("skip"),
		"pkg/keep.yaml": cm("keep") + "---\n" + cm("keep2"), "pkg/sub/list.yaml": "apiVersion: v1\nkind: List\nitems:\n- " + "apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s\n",
		"pkg/sub/dup.yaml": cm("d") + "  name: again\n", "pkg/sub/bad.yaml": "[not: yaml", "chart/templates/t.yaml": "{{ if .Values.x }}\n[\n{{ end }}\n",
		"other/z.YAML": cm("z"),
	}
	for _, paths := range [][]string{{"."}, {"pkg"}, {"pkg/sub", "a.yaml"}, {"pkg/keep.yaml", "pkg"}} {
		t.Run(filepath.Join(paths...), func(t *testing.T) {
			dir, top := committed(t, files)
			var onDisk []string
			for _, p := range paths {
				onDisk = append(onDisk, filepath.Join(top, p))
			}
			want := summarize(t, top, ReadPaths(onDisk, nil))
			rev, err := ReadRevision(dir, "HEAD")
			require.NoError(t, err)
			require.Equal(t, top, rev.Top)
			for _, p := range onDisk {
				require.True(t, rev.Has(p), p)
			}
			require.False(t, rev.Has(filepath.Join(top, "missing")))
			require.NotEmpty(t, want.Items)
			require.Equal(t, want, summarize(t, top, rev.readPaths(onDisk)))
		})
	}
}
