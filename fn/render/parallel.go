package render

import (
	"github.com/rotate-certs/rotate-certs/fn/atomicfs"
	"github.com/rotate-certs/rotate-certs/fn/pass"
	"github.com/rotate-certs/rotate-certs/fn/resio"
)

// rendered is what one package's render gave: its files or its error.
type rendered struct {
	files []atomicfs.File
	err   error
}

// writes holds what a package's function wrote to stderr, write by write.
type writes [][]byte

func (w *writes) Write(b []byte) (int, error) {
	*w = append(*w, append([]byte(nil), b...))
	return len(b), nil
}

// renderAll renders each package (renderPackage) on o.Workers goroutines
// (pass.Each: each parsed when a worker takes it, let go once its files
// are encoded) and returns what each gave, in package order. What each
// package writes to stderr is held and written to o.Stderr in package
// order, write by write (the printer scrubs each as it comes), as soon as
// every package before it is done: the lines and their order are those
// of a render of one package after the other, whatever finished first.
// The packages share the tree, read only, and nothing else.
func renderAll(dir string, pkgs []*pass.Package, o Options) []rendered {
	type held struct {
		rendered
		stderr writes
	}
	outs := make([]rendered, len(pkgs))
	pass.Each(pkgs, o.Workers, func(p *pass.Package, pkg *resio.Resources, err error) held {
		var h held
		h.files, h.err = renderPackage(dir, p, pkg, err, o, &h.stderr)
		return h
	}, func(i int, h held) {
		for _, b := range h.stderr {
			_, _ = o.Stderr.Write(b)
		}
		outs[i] = h.rendered
	})
	return outs
}
