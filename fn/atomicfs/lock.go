package atomicfs

import (
	"fmt"
	"os"
	"path/filepath"
)

// LockName is the lock file Lock creates in the directory it locks.
const LockName = ".rotate-certs.lock"

// Lock takes the directory's write lock, the file LockName in dir: a
// second Lock of the same directory, from any process, fails with an error
// naming the file until the first is released by calling unlock, which
// also removes the file. On Linux and other Unix systems the file is
// locked with flock(2), which the kernel drops with the process that holds
// it: a killed writer leaves no stale lock, at most the file, which the
// next Lock reuses. Elsewhere the lock is the file's existence, and a
// killed writer's file must be removed by hand (the error says so).
func Lock(dir string) (unlock func() error, err error) {
	path := filepath.Join(dir, LockName)
	f, err := acquire(path, dir)
	if err != nil {
		return nil, err
	}
	// Who holds it, for a person looking at the file.
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "rotate-certs pid %d\n", os.Getpid())
	return func() error { return release(f) }, nil
}
