package atomicfs

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// flushTemp notes the file system of t's temporary file f, still open;
// syncTemps flushes each file system once, with syncfs(2), instead of one
// fsync per file - the same guarantee (every temporary file is on disk
// before the first rename) at a fraction of the system calls.
func flushTemp(f *os.File, t *target) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	t.fs = uint64(st.Dev)
	return nil
}

// syncTemps flushes every file system the temporary files lie on (a
// package may span mounts), once each.
func syncTemps(targets []*target) error {
	done := map[uint64]bool{}
	for _, t := range targets {
		if done[t.fs] {
			continue
		}
		f, err := os.Open(t.temp)
		if err != nil {
			return fmt.Errorf("%s: flushing: %w; nothing was written", t.Path, err)
		}
		err = unix.Syncfs(int(f.Fd()))
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: flushing: %w; nothing was written", t.Path, err)
		}
		done[t.fs] = true
	}
	return nil
}
