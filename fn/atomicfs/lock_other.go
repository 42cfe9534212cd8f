//go:build !unix

package atomicfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// acquire creates the lock file, which must not exist.
func acquire(path, dir string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s exists: another rotate-certs is writing %s, or one was killed; if none is running, remove the file and run again", path, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("creating the lock file %s: %w", path, err)
	}
	return f, nil
}

func release(f *os.File) error {
	f.Close()
	return os.Remove(f.Name())
}

func owner(os.FileInfo) (int, int) { return -1, -1 }

func chown(string, int, int) {}

func syncDir(string) error { return nil }
