package atomicwrite

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// syncEach is false on Linux: the temporary files are flushed together by
// syncTemps, one syncfs(2) per file system they lie on, instead of one
// fsync each - the same guarantee (every temporary file is on disk before
// the first rename) at a fraction of the system calls.
const syncEach = false

// syncTemps flushes the file system of every temporary file, once per
// file system (a package may span mounts).
func syncTemps(targets []*target) error {
	done := map[uint64]bool{}
	for _, t := range targets {
		f, err := os.Open(t.temp)
		if err != nil {
			return fmt.Errorf("%s: flushing: %w; nothing was written", t.Path, err)
		}
		var st syscall.Stat_t
		err = syscall.Fstat(int(f.Fd()), &st)
		if err == nil && !done[st.Dev] {
			err = unix.Syncfs(int(f.Fd()))
			done[st.Dev] = err == nil
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: flushing: %w; nothing was written", t.Path, err)
		}
	}
	return nil
}
