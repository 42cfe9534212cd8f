package rotate

import (
	"fmt"
	"io"
)

// MaxInputBytes is the largest ResourceList function mode reads from stdin:
// 128 MiB. A package of 100,000 resources is about 50 MB, and its rendered
// output fed back in (results included) about 85 MB; the cap leaves half as
// much again. It bounds the memory a hostile or runaway input can take: the
// fast path needed 26 times its input for the first render of 100,000
// resources (1.3 GB for 51 MB) and 58 times for 126 MB of ConfigMaps made of
// one-letter keys, all of which it parses (7.3 GB); a list that is not in kyaml's canonical
// layout goes through kyaml's reader, which needs about 150 times its input
// and is capped lower (MaxKyamlInputBytes).
const MaxInputBytes = 128 << 20

// MaxKyamlInputBytes is the largest ResourceList function mode hands to
// kyaml's reader, which it does for a list that is not in the canonical
// layout kustomize and kpt write (see package krmio): 32 MiB. kyaml needs
// about 150 times its input in memory (7.7 GB for a 52 MB list of 100,000
// resources with CRLF line ends, measured 2026-11-23), so the cap keeps
// that path under about 5 GB.
const MaxKyamlInputBytes = 32 << 20

// ErrNotCanonicalTooLarge says why a large list was refused: it would have
// to go through kyaml's reader, and what to do instead.
type ErrNotCanonicalTooLarge struct {
	// Size is the input's size in bytes.
	Size int
	// Reason is why the fast reader declined the list (it wraps
	// krmio.ErrNotCanonical), or nil.
	Reason error
}

// Error says what was refused, why, and how to get the list read.
func (e ErrNotCanonicalTooLarge) Error() string {
	why := ""
	if e.Reason != nil {
		why = " (" + e.Reason.Error() + ")"
	}
	return fmt.Sprintf("the ResourceList is %d bytes and not in the block layout kustomize and kpt write "+
		"(one document, LF line ends, items at column 0 as \"- \")%s, so only kyaml's reader could read it, "+
		"and rotate-certs gives that reader at most %d bytes (it needs about 150 times its input in memory); "+
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
