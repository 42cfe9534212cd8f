package resio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIsRepositoryTop: the work tree's top is the top, and so is a
// directory outside git; a directory below a .git is not, whether .git is
// a directory or a file (a linked work tree).
func TestIsRepositoryTop(t *testing.T) {
	root := t.TempDir()
	repo, linked, plain := filepath.Join(root, "repo"), filepath.Join(root, "linked"), filepath.Join(root, "plain")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, "clusters", "east"), filepath.Join(linked, "sub"), filepath.Join(plain, "sub")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(linked, ".git"), []byte("gitdir: /elsewhere\n"), 0o644))
	tests := []struct {
		dir string
		top bool
	}{
		{repo, true},
		{filepath.Join(repo, "clusters"), false},
		{filepath.Join(repo, "clusters", "east"), false},
		{linked, true},
		{filepath.Join(linked, "sub"), false},
		{filepath.Join(root, "missing"), false},
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(root), ".git")); err != nil {
		// Outside git (the temporary directory usually is): any
		// directory is its own top.
		tests = append(tests, struct {
			dir string
			top bool
		}{filepath.Join(plain, "sub"), true})
	}
	for _, tt := range tests {
		require.Equal(t, tt.top, IsRepositoryTop(tt.dir), tt.dir)
	}
}
