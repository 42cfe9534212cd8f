package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/atomicfs"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
)

// The envoy-gateway example renders two files: ratelimit.yaml (a restart
// annotation) and trust.yaml (the bundle). render writes them all or none.

func renderExample(t *testing.T, dir string) (stderr string, code int) {
	t.Helper()
	_, stderr, code = runIn(t, dir, "", "render", ".", "--policy", "rotation-policy.yaml")
	return stderr, code
}

// requireRenderFails renders dir: the render must exit 1 with want on
// stderr and leave every file as it was.
func requireRenderFails(t *testing.T, dir, want string) {
	t.Helper()
	before := e2eharness.Files(t, dir)
	stderr, code := renderExample(t, dir)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, want)
	require.Equal(t, before, e2eharness.Files(t, dir), "a failed render writes nothing")
}

// rendered returns the files the example renders to, from a clean copy.
func rendered(t *testing.T) map[string]string {
	t.Helper()
	dir := stageExample(t, "envoy-gateway")
	stderr, code := renderExample(t, dir)
	require.Equal(t, 0, code, stderr)
	return e2eharness.Files(t, dir)
}

// A read-only file among the files to write stops the render before any
// file is replaced, and the error names it; kyaml's writer had replaced the
// files before it, one by one.
func TestRenderReadOnlyFileChangesNothing(t *testing.T) {
	dir := stageExample(t, "envoy-gateway")
	require.NoError(t, os.Chmod(filepath.Join(dir, "trust.yaml"), 0o444))
	// ratelimit.yaml, sorted first, is not written either.
	requireRenderFails(t, dir, "rotate-certs render: trust.yaml: the file is read-only (mode -r--r--r--): nothing was written")
}

// render keeps the mode of the files it replaces.
func TestRenderKeepsFileModes(t *testing.T) {
	dir := stageExample(t, "envoy-gateway")
	require.NoError(t, os.Chmod(filepath.Join(dir, "trust.yaml"), 0o600))
	require.NoError(t, os.Chmod(filepath.Join(dir, "ratelimit.yaml"), 0o664))
	stderr, code := renderExample(t, dir)
	require.Equal(t, 0, code, stderr)
	for file, mode := range map[string]os.FileMode{"trust.yaml": 0o600, "ratelimit.yaml": 0o664} {
		info, err := os.Stat(filepath.Join(dir, file))
		require.NoError(t, err)
		require.Equal(t, mode, info.Mode().Perm(), file)
	}
	require.Equal(t, rendered(t)["trust.yaml"], e2eharness.Files(t, dir)["trust.yaml"])
}

// A second render of a tree while one runs is refused with the lock's
// name; the lock is a flock, so once released (or its holder killed) the
// next render runs.
func TestRenderRefusesAConcurrentRender(t *testing.T) {
	dir := stageExample(t, "envoy-gateway")
	before := e2eharness.Files(t, dir)
	unlock, err := atomicfs.Lock(dir) // what a running render holds
	require.NoError(t, err)
	stderr, code := renderExample(t, dir)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "rotate-certs render: "+filepath.Join(".", atomicfs.LockName)+" is locked: another rotate-certs is writing .; wait for it to finish")
	delete(before, atomicfs.LockName)
	got := e2eharness.Files(t, dir)
	delete(got, atomicfs.LockName)
	require.Equal(t, before, got)
	require.NoError(t, unlock())

	// A lock file a killed render left behind holds no lock.
	require.NoError(t, os.WriteFile(filepath.Join(dir, atomicfs.LockName), []byte("rotate-certs pid 1\n"), 0o644))
	stderr, code = renderExample(t, dir)
	require.Equal(t, 0, code, stderr)
	_, err = os.Stat(filepath.Join(dir, atomicfs.LockName))
	require.True(t, os.IsNotExist(err), "render removes its lock file")
}

// A render whose writes fail (a file-size limit set with prlimit: the
// kernel refuses the write, EFBIG) after it wrote the first file out
// changes nothing: every file is old, no temporary file is left. kyaml's
// writer had truncated the file it was writing and left the files before
// it rewritten. A render killed outright (the machine, SIGKILL) leaves each
// file old or new - a rename is atomic - and at most hidden temporary files
// and its lock file, which the next render removes.
func TestRenderStoppedByAFileSizeLimitChangesNothing(t *testing.T) {
	prlimit := e2eharness.Tool(t, "prlimit")
	want := rendered(t)
	// ratelimit.yaml, written first, fits under the limit; trust.yaml
	// does not.
	const limit = 1536
	require.Less(t, len(want["ratelimit.yaml"]), limit)
	require.Greater(t, len(want["trust.yaml"]), limit)
	dir := stageExample(t, "envoy-gateway")
	before := e2eharness.Files(t, dir)
	r := e2eharness.Cmd{Dir: dir}.Run(t, prlimit, "--fsize="+strconv.Itoa(limit), "--", binary, "render", ".", "--policy", "rotation-policy.yaml")
	out := r.Stdout + r.Stderr
	require.Error(t, r.Err, "the render must fail: %s", out)
	require.Contains(t, out, "rotate-certs render: trust.yaml: writing: ")
	require.Contains(t, out, "file too large; nothing was written")
	require.Equal(t, before, e2eharness.Files(t, dir), "nothing changed, nothing left")

	// What a killed render leaves: a cut temporary file, its lock file.
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".trust.yaml.1x2y3z.rotate-certs-tmp"), []byte(want["trust.yaml"][:100]), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, atomicfs.LockName), []byte("rotate-certs pid 1\n"), 0o644))
	stderr, code := renderExample(t, dir)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, want, e2eharness.Files(t, dir), "the next render removes what was left and renders as usual")
}

// A symbolic link in DIR that resolves outside it is never written
// through: the render fails naming the link and the outside file keeps its
// bytes. A link that resolves inside DIR is written through and stays a
// link.
func TestRenderRefusesToWriteThroughLinksOutside(t *testing.T) {
	t.Run("outside", func(t *testing.T) {
		dir := stageExample(t, "envoy-gateway")
		outside := filepath.Join(t.TempDir(), "trust.yaml")
		require.NoError(t, os.Rename(filepath.Join(dir, "trust.yaml"), outside))
		require.NoError(t, os.Symlink(outside, filepath.Join(dir, "trust.yaml")))
		before := e2eharness.Files(t, dir)
		outsideBefore, err := os.ReadFile(outside)
		require.NoError(t, err)
		stderr, code := renderExample(t, dir)
		require.Equal(t, 1, code)
		require.Contains(t, stderr, "rotate-certs render: trust.yaml: trust.yaml is a symbolic link (or lies under one) that resolves to "+outside+", outside .: refusing to write through it")
		require.Equal(t, before, e2eharness.Files(t, dir))
		outsideAfter, err := os.ReadFile(outside)
		require.NoError(t, err)
		require.Equal(t, string(outsideBefore), string(outsideAfter))
	})
	t.Run("inside", func(t *testing.T) {
		// (in a hidden directory, which render does not read: a file read
		// twice, by its name and through a link, is one object twice)
		dir := stageExample(t, "envoy-gateway")
		require.NoError(t, os.Mkdir(filepath.Join(dir, ".shared"), 0o755))
		require.NoError(t, os.Rename(filepath.Join(dir, "trust.yaml"), filepath.Join(dir, ".shared", "trust.yaml")))
		require.NoError(t, os.Symlink(filepath.Join(".shared", "trust.yaml"), filepath.Join(dir, "trust.yaml")))
		stderr, code := renderExample(t, dir)
		require.Equal(t, 0, code, stderr)
		target, err := os.Readlink(filepath.Join(dir, "trust.yaml"))
		require.NoError(t, err, "trust.yaml is still a link")
		require.Equal(t, filepath.Join(".shared", "trust.yaml"), target)
		got, err := os.ReadFile(filepath.Join(dir, ".shared", "trust.yaml"))
		require.NoError(t, err)
		require.Equal(t, rendered(t)["trust.yaml"], string(got))
	})
}
