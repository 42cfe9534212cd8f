package repo

import (
	"bytes"

	"github.com/rotate-certs/rotate-certs/fn/parallel"
	"github.com/rotate-certs/rotate-certs/fn/resio"
)

// rendered is what one package's render gave: its files or its error.
type rendered struct {
	files []resio.File
	err   error
}

// renderAll renders each job (renderPackage) on o.Workers goroutines and
// returns what each gave, in job order. Each package's stderr is held and
// copied to o.Stderr in job order, as soon as every package before it is
// done: the lines and their order are those of a render of one package
// after the other, whatever finished first. The packages share tree, read
// only, and nothing else.
func renderAll(dir string, tree *resio.Resources, jobs []job, o Options) []rendered {
	type held struct {
		rendered
		stderr []byte
	}
	outs := make([]rendered, len(jobs))
	parallel.Map(len(jobs), o.Workers, func() func(int) held {
		return func(i int) held {
			var stderr bytes.Buffer
			files, err := renderPackage(dir, tree, jobs[i], o, &stderr)
			return held{rendered{files, err}, stderr.Bytes()}
		}
	}, func(i int, h held) {
		o.Stderr.Write(h.stderr)
		outs[i] = h.rendered
	})
	return outs
}
