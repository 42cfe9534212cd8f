package resio

import (
	"fmt"
	"io"
)

// MaxInputBytes is the largest ResourceList function mode reads from stdin:
// 384 MiB, a list of 300,000 resources as kpt or kustomize send them,
// annotated (about 305 MB), or twice that many written by hand. What the
// fast path (readFast) keeps in memory is bounded by the input, not
// by this cap: the items it reads may hold YAML nodes for at most 24 times
// the input (TooMuchYAMLError past that), the garbage collector runs
// at 30% growth (at least 64 MiB) under a soft limit of 40 times the input, and items it
// does not read cost a few bytes each. The cap bounds what a runaway input
// costs in absolute terms.
const MaxInputBytes = 384 << 20

// MaxKyamlInputBytes is the largest ResourceList function mode hands to
// kyaml's reader, which it does for a list that is not in the layout
// kustomize and kpt write (see readFast): 32 MiB. kyaml's reader needs
// about 70 times its input (2.3 GB for a 32 MB list with indented items),
// beyond the fast path's bound, so it gets a cap of its own instead.
const MaxKyamlInputBytes = 32 << 20

// ErrNotCanonicalTooLarge says why a large list was refused: it would have
// to go through kyaml's reader, and what to do instead.
type ErrNotCanonicalTooLarge struct {
	// Size is the input's size in bytes.
	Size int
	// Reason is why the fast reader declined the list (it wraps
	// ErrNotCanonical), or nil.
	Reason error
}

// Error says what was refused, why, and how to get the list read.
func (e ErrNotCanonicalTooLarge) Error() string {
	why := ""
	if e.Reason != nil {
		why = " (" + e.Reason.Error() + ")"
	}
	return fmt.Sprintf("the ResourceList is %d bytes and not in the block layout kustomize and kpt write "+
		"(one document, items at column 0 as \"- \")%s, so only kyaml's reader could read it, "+
		"and rotate-certs gives that reader at most %d bytes (it needs about 70 times its input in memory); "+
		"run the function under kustomize or kpt, or re-write the list with kpt fn source", e.Size, why, MaxKyamlInputBytes)
}

// ErrInputTooLarge is returned by a LimitReader once its limit is passed.
type ErrInputTooLarge struct {
	// Limit is the number of bytes allowed.
	Limit int64
}

// Error says what was exceeded and what to do.
func (e ErrInputTooLarge) Error() string {
	return fmt.Sprintf("the input is larger than %d bytes, the most rotate-certs reads; split the package or run the function on the part that holds the certificates", e.Limit)
}

// LimitReader returns a reader that reads from r and fails with
// ErrInputTooLarge when r holds more than limit bytes. Unlike
// io.LimitReader it does not end quietly at the limit: a truncated
// ResourceList could parse and render without the resources cut off.
func LimitReader(r io.Reader, limit int64) io.Reader {
	return &limitedReader{r: r, left: limit, limit: limit}
}

type limitedReader struct {
	r           io.Reader
	left, limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var probe [1]byte
		n, err := l.r.Read(probe[:])
		if n > 0 {
			return 0, ErrInputTooLarge{Limit: l.limit}
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
