package resio

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// memFiles is a tree of files held in memory (a git revision's): what a
// walk lists and reads instead of the disk. It holds regular files and the
// directories above them, nothing else; the files a walk does not read
// are read when first asked for (later).
type memFiles struct {
	files map[string][]byte
	// dirs are the entries of each directory, sorted by name as
	// os.ReadDir returns them.
	dirs  map[string][]fs.DirEntry
	later *laterFiles
}

// laterFiles are files read when first asked for: their blob ids, what
// was read of them, and how to read a blob.
type laterFiles struct {
	mu   sync.Mutex
	ids  map[string]string
	got  map[string][]byte
	read func(id string) ([]byte, error)
}

// newMemFiles returns an empty tree whose top directory is top.
func newMemFiles(top string) memFiles {
	return memFiles{files: map[string][]byte{}, dirs: map[string][]fs.DirEntry{top: nil},
		later: &laterFiles{ids: map[string]string{}, got: map[string][]byte{}}}
}

// add adds the file p (a clean path below the top) holding data, and the
// directories above it.
func (m memFiles) add(p string, data []byte) {
	m.files[p] = data
	m.addEntry(p, int64(len(data)))
}

// addLater adds the file p, held by blob id, read when first asked for.
func (m memFiles) addLater(p, id string) {
	m.later.ids[p] = id
	m.addEntry(p, 0)
}

// addEntry adds p's entry to its directory, and the directories above it.
func (m memFiles) addEntry(p string, size int64) {
	entry := fs.FileInfoToDirEntry(memInfo{name: filepath.Base(p), size: size})
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		_, known := m.dirs[d]
		m.dirs[d] = append(m.dirs[d], entry)
		if known {
			return
		}
		entry = fs.FileInfoToDirEntry(memInfo{name: filepath.Base(d), dir: true})
	}
}

// sort sorts each directory's entries by name; call it after the last add.
func (m memFiles) sort() {
	for _, es := range m.dirs {
		slices.SortFunc(es, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
}

// ReadDir returns the entries of dir.
func (m memFiles) ReadDir(dir string) ([]fs.DirEntry, error) {
	es, ok := m.dirs[filepath.Clean(dir)]
	if !ok {
		return nil, notExist("open", dir)
	}
	return es, nil
}

// Stat describes the file or directory p.
func (m memFiles) Stat(p string) (fs.FileInfo, error) {
	c := filepath.Clean(p)
	if data, ok := m.files[c]; ok {
		return memInfo{name: filepath.Base(c), size: int64(len(data))}, nil
	}
	if _, ok := m.later.ids[c]; ok {
		return memInfo{name: filepath.Base(c)}, nil
	}
	if _, ok := m.dirs[c]; ok {
		return memInfo{name: filepath.Base(c), dir: true}, nil
	}
	return nil, notExist("stat", p)
}

// ReadFile returns what the file p holds; the caller must not change it
// (a blob is held once for every path that holds it).
func (m memFiles) ReadFile(p string) ([]byte, error) {
	c := filepath.Clean(p)
	if data, ok := m.files[c]; ok {
		return data, nil
	}
	return m.later.get(c)
}

// get reads the file p of the later files.
func (l *laterFiles) get(p string) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if data, ok := l.got[p]; ok {
		return data, nil
	}
	id, ok := l.ids[p]
	if !ok || l.read == nil {
		return nil, notExist("open", p)
	}
	data, err := l.read(id)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: p, Err: err}
	}
	l.got[p] = data
	return data, nil
}

// notExist is the error for a path the tree does not hold.
func notExist(op, p string) error {
	return &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist}
}

// memInfo describes a file or directory of a memFiles.
type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

// Mode is a regular file's or a directory's.
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o700
	}
	return 0o600
}
