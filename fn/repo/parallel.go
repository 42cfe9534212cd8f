package repo

import (
	"github.com/rotate-certs/rotate-certs/fn/atomicfs"
	"github.com/rotate-certs/rotate-certs/fn/parallel"
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

// renderAll renders each job (renderPackage) on o.Workers goroutines and
// returns what each gave, in job order. What each package writes to stderr
// is held and written to o.Stderr in job order, write by write (the
// printer scrubs each as it comes), as soon as every package before it is
// done: the lines and their order are those of a render of one package
// after the other, whatever finished first. The packages share tree, read
// only (each reads and releases its own files), and nothing else.
func renderAll(dir string, tree *resio.Tree, jobs []job, o Options) []rendered {
	type held struct {
		rendered
		stderr writes
	}
	outs := make([]rendered, len(jobs))
	parallel.Map(len(jobs), o.Workers, func() func(int) held {
		return func(i int) held {
			var h held
			h.files, h.err = renderPackage(dir, tree, jobs[i], o, &h.stderr)
			jobs[i].policy = nil // done with: let it go
			return h
		}
	}, func(i int, h held) {
		for _, b := range h.stderr {
			_, _ = o.Stderr.Write(b)
		}
		outs[i] = h.rendered
	})
	return outs
}
