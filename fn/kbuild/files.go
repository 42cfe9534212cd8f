package kbuild

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Files is where a build reads: the disk, or a git revision's files held
// in memory (the file systems of package resio). Paths are the host's.
type Files interface {
	ReadDir(dir string) ([]fs.DirEntry, error)
	// Stat follows a symbolic link.
	Stat(p string) (fs.FileInfo, error)
	ReadFile(p string) ([]byte, error)
}

// Disk is Files over the disk.
type Disk struct{}

func (Disk) ReadDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }
func (Disk) Stat(p string) (fs.FileInfo, error)        { return os.Stat(p) }
func (Disk) ReadFile(p string) ([]byte, error)         { return os.ReadFile(p) }

// errReadOnly is what a build gets when it tries to write: kustomize's
// loader never does, and nothing a build does may.
var errReadOnly = errors.New("rotate-certs builds a kustomization read-only")

// view is Files as kustomize's file system (filesys.FileSystem), read
// only, recording every file a build reads and handing kustomize each
// kustomization file as offline() rewrites it.
type view struct {
	files Files
	// rewrite returns what kustomize reads of the kustomization file p.
	rewrite func(p string, data []byte) []byte

	mu   sync.Mutex
	read map[string]bool
}

func newView(files Files, rewrite func(string, []byte) []byte) *view {
	return &view{files: files, rewrite: rewrite, read: map[string]bool{}}
}

// readFiles returns the files read, sorted.
func (v *view) readFiles() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]string, 0, len(v.read))
	for p := range v.read {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func (v *view) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (v *view) Mkdir(string) error                  { return errReadOnly }
func (v *view) MkdirAll(string) error               { return errReadOnly }
func (v *view) RemoveAll(string) error              { return errReadOnly }
func (v *view) WriteFile(string, []byte) error      { return errReadOnly }

// Open is refused: kustomize's loader reads whole files (ReadFile).
func (v *view) Open(p string) (filesys.File, error) {
	return nil, &fs.PathError{Op: "open", Path: p, Err: errors.ErrUnsupported}
}

func (v *view) IsDir(p string) bool {
	info, err := v.files.Stat(p)
	return err == nil && info.IsDir()
}

func (v *view) Exists(p string) bool {
	_, err := v.files.Stat(p)
	return err == nil
}

func (v *view) ReadDir(p string) ([]string, error) {
	es, err := v.files.ReadDir(p)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name()
	}
	return names, nil
}

// CleanedAbs is kustomize's on-disk rule (filesys.fsOnDisk) over Files: the
// absolute path, a directory as itself, a file as its directory and name.
func (v *view) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", "", fmt.Errorf("abs path error on '%s' : %w", p, err)
	}
	info, err := v.files.Stat(abs)
	if err != nil {
		return "", "", fmt.Errorf("evalsymlink failure on '%s' : %w", p, err)
	}
	if info.IsDir() {
		return filesys.ConfirmedDir(abs), "", nil
	}
	d, f := filepath.Split(abs)
	return filesys.ConfirmedDir(filepath.Clean(d)), f, nil
}

// Glob matches the last element of pattern in its directory.
func (v *view) Glob(pattern string) ([]string, error) {
	dir, base := filepath.Split(pattern)
	names, err := v.ReadDir(filepath.Clean(dir))
	if err != nil {
		return nil, nil //nolint:nilerr // filepath.Glob: no match is no error
	}
	var out []string
	for _, n := range names {
		if ok, err := filepath.Match(base, n); err != nil {
			return nil, err
		} else if ok {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out, nil
}

// ReadFile reads p, records it, and hands a kustomization file over as
// rewritten.
func (v *view) ReadFile(p string) ([]byte, error) {
	data, err := v.files.ReadFile(p)
	if err != nil {
		return nil, err
	}
	p = filepath.Clean(p)
	v.mu.Lock()
	v.read[p] = true
	v.mu.Unlock()
	if isKustomizationName(filepath.Base(p)) {
		data = v.rewrite(p, data)
	} else {
		data = keepLocal(p, data)
	}
	return data, nil
}

// Walk walks p in lexical order, as filepath.Walk does.
func (v *view) Walk(p string, fn filepath.WalkFunc) error {
	info, err := v.files.Stat(p)
	if err != nil {
		return fn(p, nil, err)
	}
	return v.walk(p, info, fn)
}

func (v *view) walk(p string, info fs.FileInfo, fn filepath.WalkFunc) error {
	if err := fn(p, info, nil); err != nil || !info.IsDir() {
		if errors.Is(err, filepath.SkipDir) && info.IsDir() {
			return nil
		}
		return err
	}
	es, err := v.files.ReadDir(p)
	if err != nil {
		return fn(p, info, err)
	}
	for _, e := range es {
		child := filepath.Join(p, e.Name())
		ci, err := v.files.Stat(child)
		if err != nil {
			if err := fn(child, nil, err); err != nil && !errors.Is(err, filepath.SkipDir) {
				return err
			}
			continue
		}
		if err := v.walk(child, ci, fn); err != nil {
			if errors.Is(err, filepath.SkipDir) {
				continue
			}
			return err
		}
	}
	return nil
}
