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

// TestRevisionOpenLoadRelease: an opened revision answers from its listing
// alone - what exists, what a walk may read, a file's text (one blob from
// git) - and reads only once loaded; a released one lets its blobs go and
// answers the same, and loads again. The answers of the listing are those
// of the loaded tree: a directory that holds only files a walk does not
// read is one, a directory of links only is not, a file not read is not.
func TestRevisionOpenLoadRelease(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
	dir, top := committed(t, map[string]string{"pkg/a.yaml": cm, "docs/readme.txt": "hello", "links/target.yaml": cm})
	require.NoError(t, exec.Command("ln", "-s", "../pkg/a.yaml", filepath.Join(dir, "links", "l.yaml")).Run())
	require.NoError(t, exec.Command("mkdir", filepath.Join(dir, "only-links")).Run())
	require.NoError(t, exec.Command("ln", "-s", "../pkg/a.yaml", filepath.Join(dir, "only-links", "l.yaml")).Run())
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "links")
	at := func(rel string) string { return filepath.Join(top, filepath.FromSlash(rel)) }
	answers := func(r *Revision) map[string][3]any {
		out := map[string][3]any{}
		for _, p := range []string{".", "pkg", "pkg/a.yaml", "docs", "docs/readme.txt", "links/l.yaml", "only-links", "nothing", "../outside"} {
			data, ok := r.ReadFile(at(p))
			out[p] = [3]any{r.Has(at(p)), r.Exists(at(p)), string(data) + map[bool]string{true: "", false: "(none)"}[ok]}
		}
		return out
	}
	loaded, err := ReadRevision(dir, "HEAD")
	require.NoError(t, err)
	want := answers(loaded)
	require.Equal(t, [3]any{true, true, cm}, want["pkg/a.yaml"])
	require.Equal(t, [3]any{false, true, "hello"}, want["docs/readme.txt"], "read when a build asks, not walked")
	require.Equal(t, [3]any{false, true, "(none)"}, want["only-links"])

	r, err := OpenRevision(dir, "HEAD")
	require.NoError(t, err)
	require.Equal(t, want, answers(r), "the listing answers as the loaded tree")
	require.False(t, r.loaded)
	require.NoError(t, r.Load())
	require.Len(t, r.ReadBuilt([]string{at("pkg")}).Items, 1)
	r.Release()
	require.False(t, r.loaded)
	require.Nil(t, r.files.files, "the blobs are let go")
	require.Equal(t, want, answers(r))
	require.Len(t, r.ReadBuilt([]string{at("pkg")}).Items, 1, "a read loads again")
}
