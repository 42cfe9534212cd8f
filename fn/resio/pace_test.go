package resio

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPaceToLive: the soft limit is twice the heap live when it is set
// plus paceHeadroom, a later call sets it again for what is live then,
// and restore gives back the limit before the first call; GOGC or
// GOMEMLIMIT in the environment leave it alone.
func TestPaceToLive(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	held := make([]byte, 32<<20) // live while paced
	restore := PaceToLive()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	limit := debug.SetMemoryLimit(-1)
	require.GreaterOrEqual(t, limit, int64(2*32<<20)+paceHeadroom)
	require.LessOrEqual(t, limit, int64(2*m.HeapAlloc)+paceHeadroom+1<<20)
	runtime.KeepAlive(held)
	PaceToLive() // held is no longer live
	require.Less(t, debug.SetMemoryLimit(-1), limit, "set again for what is live now")
	restore()
	require.Equal(t, before, debug.SetMemoryLimit(-1))

	t.Setenv("GOMEMLIMIT", "1GiB")
	PaceToLive()()
	require.Equal(t, before, debug.SetMemoryLimit(-1), "the environment's setting wins")
}
