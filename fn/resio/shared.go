package resio

import (
	"crypto/sha256"

	"github.com/rotate-certs/rotate-certs/fn/handover"
)

// Shared is what one read of a tree lends the next: what each file it
// parsed gave, by the file's path and text. A read given a Shared
// (Revision.ReadBuiltShared, ReadBuiltShared) takes from it what a file
// of the same path and the same text gave - the same nodes, so neither
// read, nor anything after it, may change them - and keeps what it read
// for the read after it. `diff` reads its two sides with one: a pull
// request changes few of a repository's files, and each file it leaves
// alone is parsed once and its resources are the same nodes on both sides
// (so a package whose every resource is the same node on both sides is
// the same package). A file built by a kustomization is not shared: its
// build makes new nodes each time. A Shared is used by one read at a time.
type Shared struct {
	// files are what each file gave: the read before's, read only while a
	// read runs (on every core: parse); this read's, kept on the read's
	// own goroutine (keep, from add).
	files handover.Map[string, sharedFile]
}

// sharedFile is one file's text, by its SHA-256 (the text itself is not
// held: a revision's blobs are let go once its side is read), and what
// reading it gave.
type sharedFile struct {
	sum [sha256.Size]byte
	res *Resources
}

// NewShared returns a Shared that lends nothing yet.
func NewShared() *Shared { return &Shared{} }

// parse is parsePathFile, taking what the read before gave for a file of
// the same path and text; it sums the text once, for this comparison and
// for keep.
func (sh *Shared) parse(f pathFile) pathFile {
	if f.path == "" || f.path == "-" {
		return parsePathFile(f)
	}
	f.sum = sha256.Sum256(f.data)
	if had, ok := sh.files.Before(f.path); ok && had.sum == f.sum {
		f.res = had.res
		return f
	}
	return parsePathFile(f)
}

// keep records what file f gave, for the read after this one; f is as
// parse returned it.
func (sh *Shared) keep(f pathFile) {
	if f.path == "" || f.path == "-" {
		return
	}
	sh.files.Keep(f.path, sharedFile{sum: f.sum, res: f.res})
}

// done ends a read: what it gave is what the next read is lent.
func (sh *Shared) done() { sh.files.Done() }
