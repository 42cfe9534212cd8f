package repo

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/rotate-certs/rotate-certs/fn/resio"
)

// rendered is what one package's render gave: its files or its error, and
// what it said on stderr, held until the packages before it have said
// theirs.
type rendered struct {
	files  []resio.File
	err    error
	stderr bytes.Buffer
	done   chan struct{}
}

// renderAll renders each job (renderPackage) on o.Workers goroutines and
// returns what each gave, in job order. Each package's stderr is held and
// copied to o.Stderr in job order, as soon as every package before it is
// done: the lines and their order are those of a render of one package
// after the other, whatever finished first. The packages share tree, read
// only, and nothing else.
func renderAll(dir string, tree *resio.Resources, jobs []job, o Options) []*rendered {
	outs := make([]*rendered, len(jobs))
	for i := range outs {
		outs[i] = &rendered{done: make(chan struct{})}
	}
	var next atomic.Int64 // the next job to take; jobs are taken in order
	var wg sync.WaitGroup
	for range min(workers(o), len(jobs)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(jobs); i = int(next.Add(1) - 1) {
				out := outs[i]
				out.files, out.err = renderPackage(dir, tree, jobs[i], o, &out.stderr)
				close(out.done)
			}
		})
	}
	for _, out := range outs {
		<-out.done
		o.Stderr.Write(out.stderr.Bytes())
		out.stderr = bytes.Buffer{}
	}
	wg.Wait()
	return outs
}

// workers is how many packages render at once: o.Workers, or one per core
// the Go scheduler runs on.
func workers(o Options) int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}
