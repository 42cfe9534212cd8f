//go:build unix

package atomicfs

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// acquire opens the lock file and flocks it without waiting.
func acquire(path, dir string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating the lock file %s: %w", path, err)
	}
	locked := func() (*os.File, error) {
		f.Close()
		return nil, fmt.Errorf("%s is locked: another rotate-certs is writing %s; wait for it to finish and run again", path, dir)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return locked()
	}
	// The holder may have removed the file (released) after we opened it
	// and before we locked it: the lock would then be on a file no one
	// else finds by its name.
	st, err := f.Stat()
	cur, cerr := os.Stat(path)
	if err != nil || cerr != nil || !os.SameFile(st, cur) {
		return locked()
	}
	return f, nil
}

// release removes the lock file while still holding the lock, then
// unlocks it.
func release(f *os.File) error {
	rmErr := os.Remove(f.Name())
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	if err := f.Close(); err != nil {
		return err
	}
	return rmErr
}

// owner returns the file's owner.
func owner(info os.FileInfo) (int, int) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}

// chown gives path the owner of the file it replaces, when the process
// may (root); otherwise the file keeps the writer's.
func chown(path string, uid, gid int) {
	if uid >= 0 && os.Geteuid() == 0 {
		_ = os.Lchown(path, uid, gid)
	}
}

// syncDir flushes a directory's entries (the renames) to disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
