// Package atomicfs is the file transactions of the commands that write
// files: ReplaceFiles replaces a set of files under one directory so that
// an interrupted write - an I/O error, a full disk, a file-size limit, a
// signal, a crash - leaves every file either as it was or as it should be,
// never cut short. It is how `rotate-certs render` writes a package back.
//
// Each file is written to a temporary file beside it, flushed to disk
// (fsync, or on Linux one syncfs per file system for all of them), given
// the mode (and, for root, the owner) of the file it
// replaces, and renamed over it; the directories are flushed after the
// renames. Before the first rename every file has been written and every
// target checked: a read-only file, a path that leaves the directory, a
// symbolic link that resolves outside it, or a failed write stops the whole
// set with nothing changed. A lock file refuses a second writer of the
// same directory (Lock).
package atomicfs

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// File is one file to write: Path is relative to the directory, with
// forward slashes.
type File struct {
	Path string
	Data []byte
}

// Temporary files are named .<file>.<random>.rotate-certs-tmp: hidden
// (readers of a package skip hidden files), and recognisable
// (RemoveStale).
const tempPrefix, tempSuffix = ".", ".rotate-certs-tmp"

// ReplaceFiles writes files under dir, all or nothing as far as the file system
// allows: it fails before renaming anything when a target cannot be
// written, and otherwise only a failing rename (which needs nothing a
// temporary file in the same directory did not already need) can leave
// the set half replaced - each file still old or new.
func ReplaceFiles(dir string, files []File) error {
	return replaceFiles(dir, files, func(f *os.File, data []byte) error {
		_, err := f.Write(data)
		return err
	})
}

// target is a file to replace, resolved.
type target struct {
	File
	// real is the path written: the file itself, or what a symbolic link
	// inside dir points at.
	real   string
	exists bool
	mode   fs.FileMode
	uid    int
	gid    int
	temp   string
	// fs is the file system the temporary file lies on, where syncTemps
	// flushes it (Linux).
	fs uint64
}

// replaceFiles is ReplaceFiles writing each temporary file's data with
// write (tests fail it).
func replaceFiles(dir string, files []File, write func(f *os.File, data []byte) error) (err error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return err
	}
	targets := make([]*target, 0, len(files))
	for _, f := range files {
		t, err := resolve(root, dir, f)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	var made []string // directories created, deepest last
	defer func() {
		if err == nil {
			return
		}
		for _, t := range targets {
			if t.temp != "" {
				os.Remove(t.temp)
			}
		}
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i])
		}
	}()
	for _, t := range targets {
		if !t.exists {
			created, err := mkdirAll(filepath.Dir(t.real))
			made = append(made, created...)
			if err != nil {
				return fmt.Errorf("%s: %w", t.Path, err)
			}
		}
		if err := writeTemp(t, write); err != nil {
			return err
		}
	}
	if err := syncTemps(targets); err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, t := range targets {
		if err := os.Rename(t.temp, t.real); err != nil {
			return fmt.Errorf("%s: replacing the file: %w", t.Path, err)
		}
		t.temp = ""
		dirs[filepath.Dir(t.real)] = true
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return fmt.Errorf("%s: flushing the directory: %w", d, err)
		}
	}
	return nil
}

// resolve checks that f stays inside root (dir resolved) and returns what
// to write. A symbolic link on the way, or the file itself being one, must
// resolve inside root; the file is then written where it resolves, and
// the link is kept.
func resolve(root, dir string, f File) (*target, error) {
	p := filepath.FromSlash(f.Path)
	if f.Path == "" || filepath.IsAbs(p) || filepath.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%s: not a path inside %s: refusing to write it", f.Path, dir)
	}
	full := filepath.Join(root, p)
	// The deepest part of the path that exists, resolved.
	existing := full
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		existing = filepath.Dir(existing)
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	if !inside(root, resolved) {
		return nil, fmt.Errorf("%s: %s is a symbolic link (or lies under one) that resolves to %s, outside %s: refusing to write through it", f.Path, rel(root, existing), resolved, dir)
	}
	rest, _ := filepath.Rel(existing, full)
	t := &target{File: f, real: filepath.Join(resolved, rest)}
	info, err := os.Stat(t.real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return t, nil
	case err != nil:
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file: refusing to replace it", f.Path)
	case info.Mode().Perm()&0o200 == 0:
		return nil, fmt.Errorf("%s: the file is read-only (mode %v): nothing was written; make it writable or leave it out of the package", f.Path, info.Mode().Perm())
	}
	// Open for writing, without changing it: a file the user cannot write
	// (another owner, an immutable attribute) is refused now, not after
	// other files were replaced.
	w, err := os.OpenFile(t.real, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot write the file: %w; nothing was written", f.Path, err)
	}
	w.Close()
	t.exists, t.mode = true, info.Mode().Perm()
	t.uid, t.gid = owner(info)
	return t, nil
}

func inside(root, path string) bool {
	r, err := filepath.Rel(root, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}

// writeTemp writes t's data to a new temporary file beside t.real,
// flushed, with the mode and owner of the file it replaces (a new file
// gets 0666 less the umask, as os.WriteFile gives).
func writeTemp(t *target, write func(f *os.File, data []byte) error) error {
	f, err := createTemp(filepath.Dir(t.real), tempPrefix+filepath.Base(t.real)+".", tempSuffix)
	if err != nil {
		return fmt.Errorf("%s: creating a temporary file: %w", t.Path, err)
	}
	t.temp = f.Name()
	err = write(f, t.Data)
	if err == nil {
		err = flushTemp(f, t)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: writing: %w; nothing was written", t.Path, err)
	}
	if t.exists {
		if err := os.Chmod(t.temp, t.mode); err != nil {
			return fmt.Errorf("%s: %w", t.Path, err)
		}
		chown(t.temp, t.uid, t.gid)
	}
	return nil
}

// createTemp creates a new file prefix<random>suffix in dir with mode 0666
// less the umask (os.CreateTemp gives 0600).
func createTemp(dir, prefix, suffix string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil || !errors.Is(err, fs.ErrExist) || try == 100 {
			return f, err
		}
	}
}

// mkdirAll creates dir and its missing parents, returning those it
// created, outermost first.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append([]string{d}, missing...)
		if filepath.Dir(d) == d {
			break
		}
	}
	var made []string
	for _, d := range missing {
		if err := os.Mkdir(d, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return made, err
		}
		made = append(made, d)
	}
	return made, nil
}

// RemoveStale removes the temporary files a killed writer left under dir
// (hidden files named .<file>.<random>.rotate-certs-tmp). Call it holding
// the lock. A directory it cannot read is skipped: a writer could not have
// left a file there either.
func RemoveStale(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil
		}
		if !d.IsDir() && d.Type().IsRegular() && strings.HasPrefix(d.Name(), tempPrefix) && strings.HasSuffix(d.Name(), tempSuffix) {
			return os.Remove(path)
		}
		if d.IsDir() && path != dir && (d.Name() == ".git") {
			return filepath.SkipDir
		}
		return nil
	})
}
