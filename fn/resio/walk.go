package resio

// Walking a directory: Walk lists the manifest files under a directory by the one set of
// rules that every rotate-certs command reading a directory follows
// (render, check, init, and the packages render and check find):
//
//   - hidden files and directories (.git, .github, kpt's .expected) are
//     skipped;
//   - a .krmignore file applies, like a .gitignore, to the directory that
//     holds it and everything below it (kpt reads it at a package's top;
//     here every directory's counts, so a repository of many packages
//     walked from its top honours each package's own file);
//   - a file is read when its name ends in one of the extensions asked
//     for; a symbolic link to a file is followed, a linked directory is not
//     entered;
//   - a manifest name that is not a regular file (a FIFO, a socket, a
//     device) is a problem, never read: reading a FIFO waits forever.
//
// Paths named on the command line are not walked: a named file is read
// whatever these rules say (only the regular-file rule holds).

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	gitignore "github.com/monochromegane/go-gitignore"
	"github.com/rotate-certs/rotate-certs/fn/kbuild"
)

// ignoreFile is the name of the file that lists what to skip.
const ignoreFile = ".krmignore"

// Manifests are the extensions render reads and writes.
var Manifests = []string{".yaml", ".yml"}

// manifestsAndJSON are the extensions check and init read.
var manifestsAndJSON = []string{".yaml", ".yml", ".json"}

// IsManifest reports whether a file's name says it is a YAML or JSON
// manifest (manifestsAndJSON, regardless of case).
func IsManifest(name string) bool { return hasExt(name, manifestsAndJSON) }

// Walked is what a walk found.
type Walked struct {
	// Files are the paths to read (root joined with the path below it), in
	// lexical order.
	Files []string
	// Problems are the files that cannot be read safely (not regular) and
	// the directories or ignore files that could not be read; the walk
	// goes on past them. Each names the path.
	Problems []error
}

// Walk walks root, a directory, for files ending in one of exts (compared
// without regard to case).
func Walk(root string, exts []string) Walked {
	return walk(osFiles{}, root, exts)
}

// walk is Walk over files.
func walk(files fileSystem, root string, exts []string) Walked {
	return walkNamed(files, root, exts, nil)
}

// walkNamed is walk that also lists the files named one of names (whatever
// their extension: kustomize's `Kustomization`).
func walkNamed(files fileSystem, root string, exts, names []string) Walked {
	var res Walked
	w := &walker{files: files, exts: exts, names: names, res: &res}
	if err := w.dir(root, nil); err != nil {
		res.Problems = append(res.Problems, err)
	}
	slices.Sort(res.Files)
	return res
}

// walkPath lists what to read for a path named on the command line: the path
// itself when it is a file (a regular one, or a link to one), else the
// walk of the directory. A path that does not exist is a problem.
func walkPath(files fileSystem, p string, exts []string) Walked {
	info, err := files.Stat(p)
	if err != nil {
		return Walked{Problems: []error{err}}
	}
	if info.IsDir() {
		return walk(files, p, exts)
	}
	if err := regularFile(p, info.Mode()); err != nil {
		return Walked{Problems: []error{err}}
	}
	return Walked{Files: []string{p}}
}

// regularFile returns an error naming p when mode (its type, what os.Stat
// says of it or its directory entry) is not a regular file's: reading a
// FIFO blocks until a writer comes, a device may never end.
func regularFile(p string, mode fs.FileMode) error {
	if mode.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO), not a regular file"
	case mode&fs.ModeSocket != 0:
		what = "a socket, not a regular file"
	case mode&fs.ModeDevice != 0:
		what = "a device, not a regular file"
	}
	return fmt.Errorf("%s: %s: not read (reading it could wait forever); remove it, or list it in %s", p, what, ignoreFile)
}

type walker struct {
	files fileSystem
	exts  []string
	names []string
	res   *Walked
	// abs makes a path absolute, the working directory read once.
	abs absPaths
}

// absPaths makes paths absolute as filepath.Abs does, asking the system
// for the working directory once rather than for every path: a walk of
// 10,000 clusters makes 40,000 directories absolute, and a read 170,000
// files.
type absPaths struct{ cwd string }

// of returns p absolute (filepath.Abs).
func (a *absPaths) of(p string) (string, error) {
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	if a.cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		a.cwd = wd
	}
	return filepath.Join(a.cwd, p), nil
}

// key is p absolute, or p itself when the working directory cannot be
// read: the key of a file among the files read.
func (a *absPaths) key(p string) string {
	if abs, err := a.of(p); err == nil {
		return abs
	}
	return p
}

// ignored reports whether one of the .krmignore files ms (each knows the
// directory it applies to) lists path.
func ignored(ms []gitignore.IgnoreMatcher, path string, isDir bool) bool {
	return slices.ContainsFunc(ms, func(m gitignore.IgnoreMatcher) bool { return m.Match(path, isDir) })
}

// dir reads one directory: its .krmignore first, then its entries.
func (w *walker) dir(dir string, ms []gitignore.IgnoreMatcher) error {
	entries, err := w.files.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	abs, err := w.abs.of(dir)
	if err != nil {
		return err
	}
	// A directory's .krmignore is among its entries (ReadDir lists hidden
	// names too): only then is it looked at.
	if slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == ignoreFile }) {
		if m, err := readIgnore(w.files, abs); err != nil {
			w.res.Problems = append(w.res.Problems, fmt.Errorf("%s: %w", filepath.Join(dir, ignoreFile), err))
		} else if m != nil {
			ms = append(ms[:len(ms):len(ms)], m)
		}
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		absPath := filepath.Join(abs, name)
		if e.IsDir() {
			if ignored(ms, absPath, true) {
				continue
			}
			if err := w.dir(path, ms); err != nil {
				w.res.Problems = append(w.res.Problems, err)
			}
			continue
		}
		listed := slices.Contains(w.exts, strings.ToLower(filepath.Ext(name))) || slices.Contains(w.names, name)
		if !listed || ignored(ms, absPath, false) {
			continue
		}
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			info, err := w.files.Stat(path) // follows a link
			if err != nil {
				w.res.Problems = append(w.res.Problems, err)
				continue
			}
			mode = info.Mode()
		}
		if mode.IsDir() {
			continue // a link to a directory is not entered
		}
		if err := regularFile(path, mode); err != nil {
			w.res.Problems = append(w.res.Problems, err)
			continue
		}
		w.res.Files = append(w.res.Files, path)
	}
	return nil
}

// readIgnore reads dir's .krmignore; nil when there is none.
func readIgnore(files fileSystem, dir string) (gitignore.IgnoreMatcher, error) {
	path := filepath.Join(dir, ignoreFile)
	info, err := files.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := regularFile(path, info.Mode()); err != nil {
		return nil, err
	}
	data, err := files.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return gitignore.NewGitIgnoreFromReader(dir, bytes.NewReader(data)), nil
}

// fileSystem is where a walk lists and reads files: the disk (osFiles),
// or a git revision held in memory (Revision). Paths are the host's. It
// is what a kustomization build reads too (kbuild.Files).
type fileSystem = kbuild.Files

// osFiles is the disk.
type osFiles = kbuild.Disk
