package resio

import (
	"os"
	"path/filepath"
)

// IsRepositoryTop reports whether dir is the top of its repository: the top
// of the git work tree it is in (the directory that holds .git, a
// directory or, in a linked work tree or submodule, a file), or, outside
// git, any directory. A run there sees every package of the repository,
// and so every bundle of a trust domain (docs/reference/policy.md, Trust
// domains). A directory that cannot be resolved is not a top.
func IsRepositoryTop(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return false
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d == abs
		}
		parent := filepath.Dir(d)
		if parent == d {
			return true
		}
		d = parent
	}
}
