package parallel

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMapIsInOrder: whatever the number of workers, and though later jobs
// finish first (with several workers each even job waits for the one
// after it to have finished),
// done sees every result once, in the order of the jobs, and each
// goroutine made its job once.
func TestMapIsInOrder(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 4}, {1, 0}, {7, 1}, {50, 3}, {50, 0}, {3, 10}} {
		t.Run(fmt.Sprintf("n=%d,workers=%d", tc.n, tc.workers), func(t *testing.T) {
			var made atomic.Int32
			finished := make([]chan struct{}, tc.n+1)
			for i := range finished {
				finished[i] = make(chan struct{})
			}
			close(finished[tc.n])
			var got []string
			Map(tc.n, tc.workers, func() func(int) string {
				made.Add(1)
				return func(i int) string {
					if tc.workers > 1 && i%2 == 0 {
						// The next (odd) job, taken by another goroutine
						// and waiting for none, finishes first.
						<-finished[i+1]
					}
					close(finished[i])
					return fmt.Sprint("job ", i)
				}
			}, func(i int, r string) {
				require.Equal(t, fmt.Sprint("job ", i), r)
				got = append(got, r)
			})
			require.Len(t, got, tc.n)
			workers := tc.workers
			if workers < 1 {
				workers = 1 << 30
			}
			require.LessOrEqual(t, int(made.Load()), max(min(workers, tc.n), 0))
		})
	}
}
