// Package parallel runs independent jobs on every core and hands their
// results back in the order of the jobs, so that a caller's output is that
// of running them one after the other.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Map runs job i for each i in [0, n) on at most workers goroutines (0 or
// less: one per core, GOMAXPROCS), and calls done(i, result) on the
// caller's goroutine in the order of i, each as soon as jobs 0 to i have
// finished - so done can write output as a serial run would, while later
// jobs still run. Each goroutine runs the jobs of the func newJob returns
// to it: state of its own, such as a parser, is made there. Jobs are
// started in the order of i. Map returns when every job is done.
func Map[T any](n, workers int, newJob func() func(i int) T, done func(i int, result T)) {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]T, n)
	finished := make([]chan struct{}, n)
	for i := range finished {
		finished[i] = make(chan struct{})
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			job := newJob()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				results[i] = job(i)
				close(finished[i])
			}
		})
	}
	for i := range n {
		<-finished[i]
		done(i, results[i])
		var zero T
		results[i] = zero // done has it: let it go when done does
	}
	wg.Wait()
}
