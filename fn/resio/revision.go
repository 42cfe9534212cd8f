package resio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kbuild"
	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// Reading a git revision: `rotate-certs diff` reads the files of a commit
// by the same rules as a directory (Walk, ReadPaths, ReadBuilt) from
// memory: the blobs a walk may read - manifests, .krmignore files,
// kustomization files and certificate files - are read with the `git`
// binary (ls-tree and cat-file, never the network, nothing written to the
// repository or anywhere else) and named as if the commit were checked out
// at the top of the repository; the walk and the readers then list and
// read them instead of the disk. Every other file of the commit is listed
// too and read only when a kustomization build asks for it (a
// generator's input may have any name). git archive is not used: it honours the
// commit's own export-ignore attributes, by which a change could hide a
// file from its own review.

// Revision is a commit's tree, held in memory.
type Revision struct {
	// Top is the directory the files are named under: the top of the
	// repository (nothing is read there; the names only show where each
	// file sits in the commit).
	Top string
	// Prefix is the directory of the repository the command runs in,
	// relative to its top ("" at the top, else ending in "/"): the paths
	// a user names are relative to it.
	Prefix string
	// Notes are the entries skipped on purpose (symbolic links,
	// submodules), one line each.
	Notes []string
	// dir is the directory of the repository the commit is read from;
	// blobs are the files of the listing a walk may read, later every
	// other regular file (read when a build asks for it).
	dir          string
	blobs, later []blob
	// files are the blobs read (Load), nothing before that and after
	// Release.
	files  memFiles
	loaded bool
	// others are the paths of the listing that are neither blobs nor
	// later (links, submodules): with them, every path of the commit
	// below Top, whether a walk reads it or not (Exists).
	others []string
}

// Exists reports whether p (below Top) is a file, symbolic link,
// submodule or directory of the commit, whether or not a walk reads it:
// a path a user names that is in the commit but holds no manifest still
// exists there.
func (r *Revision) Exists(p string) bool {
	rel, inside := r.relative(p)
	if !inside {
		return false
	}
	if _, ok := named(rel, r.blobs, r.later); ok || rel == "." || holdsBelow(rel, r.blobs, r.later) {
		return true
	}
	return slices.ContainsFunc(r.others, func(name string) bool { return name == rel || strings.HasPrefix(name, rel+"/") })
}

// named returns the blob of lists named rel.
func named(rel string, lists ...[]blob) (blob, bool) {
	for _, list := range lists {
		for _, b := range list {
			if b.name == rel {
				return b, true
			}
		}
	}
	return blob{}, false
}

// holdsBelow reports whether a blob of lists is below the directory rel.
func holdsBelow(rel string, lists ...[]blob) bool {
	for _, list := range lists {
		for _, b := range list {
			if strings.HasPrefix(b.name, rel+"/") {
				return true
			}
		}
	}
	return false
}

// ReadFile returns the content of file p (below Top) as a walk or a build
// reads it; ok is false for a file the revision does not hold (absent, or
// a file neither reads). Before Load or after Release it reads the one
// blob from git.
func (r *Revision) ReadFile(p string) (data []byte, ok bool) {
	if r.loaded {
		data, err := r.files.ReadFile(filepath.Clean(p))
		return data, err == nil
	}
	rel, inside := r.relative(p)
	b, ok := named(rel, r.blobs, r.later)
	if !inside || !ok {
		return nil, false
	}
	data, err := git(r.dir, nil, "cat-file", "blob", b.id)
	return data, err == nil
}

// Has reports whether p (below Top) is a directory of the revision or a
// file a walk may read: the top, a file of blobs, or a directory above a
// regular file (a directory that holds only links or submodules is not
// one a walk lists). It reads the listing, loaded or not.
func (r *Revision) Has(p string) bool {
	rel, inside := r.relative(p)
	if !inside {
		return false
	}
	_, walked := named(rel, r.blobs)
	return rel == "." || walked || holdsBelow(rel, r.blobs, r.later)
}

// relative returns p (below Top) as a slash path relative to Top, as the
// listing names files; inside is false for a path outside Top.
func (r *Revision) relative(p string) (rel string, inside bool) {
	rel, err := filepath.Rel(r.Top, filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Load reads the blobs a walk may read into memory (one git cat-file
// --batch) and lists the other files, read when a build asks for them;
// a loaded revision loads nothing again. OpenRevision lists a commit
// without its blobs, so that a command holds a commit's files only while
// it reads them (diff: each side while it reads that side).
func (r *Revision) Load() error {
	if r.loaded {
		return nil
	}
	if err := r.read(r.dir, r.blobs); err != nil {
		return err
	}
	if err := r.listLater(r.dir, r.later); err != nil {
		return err
	}
	r.loaded = true
	return nil
}

// Release lets go of the blobs Load read; the listing stays (Exists, Has,
// ReadFile), and Load reads them again.
func (r *Revision) Release() { r.files, r.loaded = memFiles{}, false }

// readPaths is ReadPaths (no stdin) over the revision: paths are below
// Top.
func (r *Revision) readPaths(paths []string) *Resources { return r.readLoaded(paths, false, nil) }

// readLoaded is readPaths over the revision's files, the revision loaded
// first; when that fails, the failure is the read's one problem.
func (r *Revision) readLoaded(paths []string, build bool, sh *Shared) *Resources {
	if err := r.Load(); err != nil {
		return &Resources{Problems: []Problem{{Message: "reading the commit from git: " + err.Error()}}}
	}
	return readPaths(r.files, paths, nil, build, sh)
}

// IsRevision reports whether rev names a commit of the git repository
// that holds dir.
func IsRevision(dir, rev string) bool {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return false
	}
	_, err := git(dir, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	return err == nil
}

// MergeBase returns the commit git merge-base finds for commits a and b
// of the repository that holds dir: where the history that b has and a
// lacks starts.
func MergeBase(dir, a, b string) (string, error) {
	for _, rev := range []string{a, b} {
		if !IsRevision(dir, rev) {
			return "", fmt.Errorf("%s is not a commit of the repository", kube.Quote(rev))
		}
	}
	out, err := git(dir, nil, "merge-base", "--end-of-options", a, b)
	if err != nil {
		return "", fmt.Errorf("%s and %s have no common history: %w", kube.Quote(a), kube.Quote(b), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// GitTop returns the top directory of the repository that holds dir and
// dir's path below it ("" or ending in "/").
func GitTop(dir string) (top, prefix string, err error) {
	out, err := git(dir, nil, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return "", "", err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	top = lines[0]
	if len(lines) > 1 {
		prefix = lines[1]
	}
	return top, prefix, nil
}

// ReadRevision reads the manifests (*.yaml, *.yml, *.json) and .krmignore
// files of commit rev of the repository that holds dir into memory:
// OpenRevision, then Load.
func ReadRevision(dir, rev string) (*Revision, error) {
	r, err := OpenRevision(dir, rev)
	if err != nil {
		return nil, err
	}
	if err := r.Load(); err != nil {
		return nil, err
	}
	return r, nil
}

// OpenRevision lists commit rev of the repository that holds dir: its
// paths and which of its files a walk reads, their blobs read by Load.
// Symbolic links and submodules are skipped, each with a note: what they
// point at is not in the commit.
func OpenRevision(dir, rev string) (*Revision, error) {
	if !IsRevision(dir, rev) {
		return nil, fmt.Errorf("%s is not a commit of the git repository at %s", kube.Quote(rev), kube.SafePath(dir))
	}
	top, prefix, err := GitTop(dir)
	if err != nil {
		return nil, err
	}
	list, err := git(dir, nil, "ls-tree", "-r", "-z", "--full-tree", "--end-of-options", rev)
	if err != nil {
		return nil, err
	}
	r := &Revision{Top: filepath.Clean(top), Prefix: prefix, dir: dir}
	r.list(list)
	return r, nil
}

// blob is one file of a tree listing.
type blob struct{ id, name string }

// list records an ls-tree -z listing: every path, the blobs a walk may
// read and the other regular files.
func (r *Revision) list(list []byte) {
	for _, entry := range bytes.Split(list, []byte{0}) {
		m, n, ok := bytes.Cut(entry, []byte{'\t'})
		if !ok {
			continue
		}
		// name and id are strings of their own, not of the entry: the
		// listing of a fleet's commit is held while diff runs.
		name, f := string(n), strings.Fields(string(m))
		if len(f) != 3 || f[0] == "120000" && !walkable(name) {
			r.others = append(r.others, name)
			continue
		}
		switch {
		case f[1] != "blob":
			r.others = append(r.others, name)
			r.Notes = append(r.Notes, fmt.Sprintf("%s: a submodule, not read", kube.SafePath(name)))
		case f[0] == "120000": // a link a walk would read
			r.others = append(r.others, name)
			r.Notes = append(r.Notes, fmt.Sprintf("%s: a symbolic link in the commit, not read", kube.SafePath(name)))
		case walkable(name):
			r.blobs = append(r.blobs, blob{id: f[2], name: name})
		default:
			r.later = append(r.later, blob{id: f[2], name: name})
		}
	}
}

// walkable reports whether a walk may read the file name: a manifest, an
// ignore file, a kustomization or a certificate file.
func walkable(name string) bool {
	base := path.Base(name)
	if base == ignoreFile || kbuild.IsKustomization(base) {
		return true
	}
	return hasExt(base, manifestsAndJSON) || hasExt(base, certificateFiles)
}

// listLater lists the blobs read only when asked for (a kustomization's
// generator inputs), each read then with git cat-file.
func (r *Revision) listLater(dir string, later []blob) error {
	for _, b := range later {
		target, err := r.below(b.name)
		if err != nil {
			return err
		}
		r.files.addLater(target, b.id)
	}
	r.files.sort()
	r.files.later.read = func(id string) ([]byte, error) { return git(dir, nil, "cat-file", "blob", id) }
	return nil
}

// below names the file name of the commit below r.Top.
func (r *Revision) below(name string) (string, error) {
	target := filepath.Join(r.Top, filepath.FromSlash(name))
	if !strings.HasPrefix(target, r.Top+string(filepath.Separator)) {
		return "", fmt.Errorf("%s: a path outside the tree", kube.SafePath(name))
	}
	return target, nil
}

// hasExt reports whether name ends in one of exts, regardless of case.
func hasExt(name string, exts []string) bool {
	lower := strings.ToLower(name)
	for _, e := range exts {
		if strings.HasSuffix(lower, e) {
			return true
		}
	}
	return false
}

// read reads blobs through one `git cat-file --batch` and names each
// below r.Top. Each blob is asked for and held once: a repository of many
// clusters holds the same file once per cluster.
func (r *Revision) read(dir string, blobs []blob) error {
	r.files = newMemFiles(r.Top)
	if len(blobs) == 0 {
		return nil
	}
	var ids bytes.Buffer
	var unique []blob
	content := map[string][]byte{}
	for _, b := range blobs {
		if _, ok := content[b.id]; !ok {
			content[b.id] = nil
			unique = append(unique, b)
			ids.WriteString(b.id + "\n")
		}
	}
	out, err := git(dir, &ids, "cat-file", "--batch")
	if err != nil {
		return err
	}
	rd := bufio.NewReader(bytes.NewReader(out))
	for _, b := range unique {
		if content[b.id], err = readBatchEntry(rd); err != nil {
			return fmt.Errorf("reading %s from git: %w", kube.SafePath(b.name), err)
		}
	}
	for _, b := range blobs {
		target, err := r.below(b.name)
		if err != nil {
			return err
		}
		r.files.add(target, content[b.id])
	}
	r.files.sort()
	return nil
}

// readBatchEntry reads one "<id> blob <size>\n<content>\n" entry of git
// cat-file --batch.
func readBatchEntry(rd *bufio.Reader) ([]byte, error) {
	header, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	f := strings.Fields(header)
	if len(f) != 3 || f[1] != "blob" {
		return nil, fmt.Errorf("unexpected git cat-file answer %s", kube.Quote(strings.TrimSpace(header)))
	}
	size, err := strconv.Atoi(f[2])
	if err != nil || size < 0 {
		return nil, fmt.Errorf("unexpected git cat-file size %s", kube.Quote(f[2]))
	}
	data := make([]byte, size+1)
	if _, err := io.ReadFull(rd, data); err != nil {
		return nil, err
	}
	return data[:size], nil
}

// git runs the git binary in dir with stdin and returns its stdout; the
// error holds the first line of its stderr.
func git(dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-c", "core.quotepath=off"}, args...)...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return nil, fmt.Errorf("git %s: %s", args[0], kube.Safe(msg))
		}
		return nil, fmt.Errorf("git %s: %v", args[0], err)
	}
	return out, nil
}
