//go:build unix

package resio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestFIFOIsAProblem: a named pipe called *.yaml is reported, by name,
// and never opened - opening a FIFO for reading waits for a writer that
// never comes. The rest of the directory is still listed.
func TestFIFOIsAProblem(t *testing.T) {
	root := t.TempDir()
	write(t, root, "ok.yaml", "kind: ConfigMap\n")
	fifo := filepath.Join(root, "pipe.yaml")
	require.NoError(t, unix.Mkfifo(fifo, 0o644))

	res := Walk(root, Manifests)
	require.Equal(t, []string{filepath.Join(root, "ok.yaml")}, res.Files)
	require.Len(t, res.Problems, 1)
	require.Contains(t, res.Problems[0].Error(), fifo+": a named pipe (FIFO), not a regular file: not read")

	res = walkPath(osFiles{}, fifo, Manifests)
	require.Empty(t, res.Files)
	require.Len(t, res.Problems, 1, "a FIFO named on the command line is refused too")

	// A link to a FIFO is no better.
	require.NoError(t, os.Symlink(fifo, filepath.Join(root, "link.yaml")))
	res = Walk(root, Manifests)
	require.Len(t, res.Problems, 2)
}

// TestLinkedFIFOAndBrokenLinkAreProblems: the walk reads a file's type
// from its directory entry and follows only a link: a link to a FIFO is
// the FIFO's problem, a link to nothing a problem of its own, and neither
// is read.
func TestLinkedFIFOAndBrokenLinkAreProblems(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	write(t, root, "ok.yaml", "kind: ConfigMap\n")
	fifo := filepath.Join(elsewhere, "pipe")
	require.NoError(t, unix.Mkfifo(fifo, 0o644))
	require.NoError(t, os.Symlink(fifo, filepath.Join(root, "linked-pipe.yaml")))
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "gone.yaml"), filepath.Join(root, "broken.yaml")))
	res := Walk(root, Manifests)
	require.Equal(t, []string{"ok.yaml"}, rels(t, root, res.Files))
	require.Len(t, res.Problems, 2)
	require.Contains(t, res.Problems[0].Error()+res.Problems[1].Error(), "named pipe (FIFO)")
	require.Contains(t, res.Problems[0].Error()+res.Problems[1].Error(), "broken.yaml")
}
