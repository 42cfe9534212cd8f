package atomicfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// tree writes files (path -> content) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return dir
}

// snapshot returns every entry under dir: files with their content and
// mode, links with their target, directories.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, path)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(path)
			require.NoError(t, err)
			out[rel] = "-> " + target
		case info.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			out[rel] = info.Mode().Perm().String() + " " + string(b)
		}
		return nil
	}))
	return out
}

func TestWriteReplacesAndCreates(t *testing.T) {
	dir := tree(t, map[string]string{"a.yaml": "old a", "sub/b.yaml": "old b"})
	require.NoError(t, os.Chmod(filepath.Join(dir, "sub/b.yaml"), 0o600))
	require.NoError(t, ReplaceFiles(dir, []File{
		{Path: "a.yaml", Data: []byte("new a")},
		{Path: "sub/b.yaml", Data: []byte("new b")},
		{Path: "new/deeper/c.yaml", Data: []byte("new c")},
	}))
	got := snapshot(t, dir)
	require.Equal(t, "-rw-r--r-- new a", got["a.yaml"])
	require.Equal(t, "-rw------- new b", got["sub/b.yaml"], "the mode of a replaced file is kept")
	require.Equal(t, "new c", strings.SplitN(got["new/deeper/c.yaml"], " ", 2)[1])
	for p := range got {
		require.NotContains(t, p, tempSuffix, "no temporary file is left")
	}
}

// A read-only file among several stops the whole set before any file is
// replaced, also for root (who could replace it).
func TestReadOnlyFileChangesNothing(t *testing.T) {
	dir := tree(t, map[string]string{"a.yaml": "old a", "b.yaml": "old b", "c.yaml": "old c"})
	require.NoError(t, os.Chmod(filepath.Join(dir, "b.yaml"), 0o444))
	before := snapshot(t, dir)
	err := ReplaceFiles(dir, []File{{"a.yaml", []byte("new a")}, {"b.yaml", []byte("new b")}, {"c.yaml", []byte("new c")}, {"d/e.yaml", []byte("new e")}})
	require.ErrorContains(t, err, "b.yaml: the file is read-only (mode -r--r--r--): nothing was written")
	require.Equal(t, before, snapshot(t, dir))
}

// A write that fails (a full disk, a file-size limit) after other files
// were written to their temporary files changes nothing: the temporary
// files and the directories made for new files are removed.
func TestFailedWriteChangesNothing(t *testing.T) {
	dir := tree(t, map[string]string{"a.yaml": "old a", "b.yaml": "old b"})
	before := snapshot(t, dir)
	calls := 0
	write := func(f *os.File, data []byte) error {
		calls++
		if calls == 3 {
			_, _ = f.Write(data[:2]) // cut short, as a full disk would
			return errors.New("file too large")
		}
		_, err := f.Write(data)
		return err
	}
	err := replaceFiles(dir, []File{{"a.yaml", []byte("new a")}, {"new/c.yaml", []byte("new c")}, {"b.yaml", []byte("new b")}}, write)
	require.ErrorContains(t, err, "b.yaml: writing: file too large; nothing was written")
	require.Equal(t, before, snapshot(t, dir))
}

func TestPathsOutsideTheDirectoryAreRefused(t *testing.T) {
	outside := t.TempDir()
	dir := tree(t, map[string]string{"a.yaml": "a"})
	for _, p := range []string{"../x.yaml", "sub/../../x.yaml", "/etc/x.yaml", filepath.Join(outside, "x.yaml"), "", ".", "a/./b", "secret_ns_../../ca.yaml"} {
		t.Run(p, func(t *testing.T) {
			err := ReplaceFiles(dir, []File{{"a.yaml", []byte("new")}, {p, []byte("x")}})
			require.ErrorContains(t, err, "refusing to write it")
			require.Equal(t, "a", string(must(os.ReadFile(filepath.Join(dir, "a.yaml")))))
		})
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// A symbolic link that resolves outside the directory - the file itself
// or a directory on the way - is refused with its name; one that resolves
// inside is written through, and stays a link.
func TestSymbolicLinks(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("outside"), 0o644))
	dir := tree(t, map[string]string{"a.yaml": "a", "real/b.yaml": "b"})
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(dir, "out.yaml")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "outdir")))
	require.NoError(t, os.Symlink("real/b.yaml", filepath.Join(dir, "in.yaml")))
	require.NoError(t, os.Symlink("real", filepath.Join(dir, "indir")))
	before := snapshot(t, dir)

	for _, p := range []string{"out.yaml", "outdir/secret.yaml", "outdir/new.yaml"} {
		t.Run(p, func(t *testing.T) {
			err := ReplaceFiles(dir, []File{{"a.yaml", []byte("new a")}, {p, []byte("x")}})
			require.ErrorContains(t, err, "is a symbolic link (or lies under one) that resolves to "+outside)
			require.ErrorContains(t, err, strings.SplitN(p, "/", 2)[0])
			require.Equal(t, before, snapshot(t, dir))
			require.Equal(t, "outside", string(must(os.ReadFile(filepath.Join(outside, "secret.yaml")))))
			_, err = os.Stat(filepath.Join(outside, "new.yaml"))
			require.True(t, os.IsNotExist(err))
		})
	}
	require.NoError(t, ReplaceFiles(dir, []File{{"in.yaml", []byte("via link")}, {"indir/c.yaml", []byte("c")}}))
	got := snapshot(t, dir)
	require.Equal(t, "-> real/b.yaml", got["in.yaml"], "the link stays a link")
	require.Equal(t, "-rw-r--r-- via link", got["real/b.yaml"])
	require.Contains(t, got["real/c.yaml"], "c")
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir)
	require.NoError(t, err)
	_, err = Lock(dir)
	require.ErrorContains(t, err, filepath.Join(dir, LockName)+" is locked: another rotate-certs is writing")
	require.NoError(t, unlock())
	_, err = os.Stat(filepath.Join(dir, LockName))
	require.True(t, os.IsNotExist(err), "unlock removes the file")

	// A lock file left by a killed writer holds no lock.
	require.NoError(t, os.WriteFile(filepath.Join(dir, LockName), []byte("rotate-certs pid 1\n"), 0o644))
	unlock, err = Lock(dir)
	require.NoError(t, err, "a stale lock file is reused")
	require.NoError(t, unlock())
}

func TestRemoveStale(t *testing.T) {
	dir := tree(t, map[string]string{"a.yaml": "a", "sub/.b.yaml.x1" + tempSuffix: "cut", ".c.yaml.x2" + tempSuffix: "cut", ".keep.yaml": "k"})
	require.NoError(t, RemoveStale(dir))
	got := snapshot(t, dir)
	require.Len(t, got, 4, "%v", got) // ., a.yaml, sub, .keep.yaml
	require.Contains(t, got, ".keep.yaml")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
