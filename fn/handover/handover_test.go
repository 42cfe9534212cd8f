package handover

import (
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// kv is one Keep.
type kv struct {
	k string
	v int
}

// TestMap: what a side keeps is lent to the side after it once the side is
// done - the side just before only, the last kept under a key - not while
// it runs (Kept sees it then); Only forgets what the side to come cannot
// take, by key or by value.
func TestMap(t *testing.T) {
	notB := func(k string, _ int) bool { return k != "b" }
	for _, tc := range []struct {
		name string
		// sides each keep their pairs and end (Done); running keeps its
		// pairs after them and does not end; only runs before running.
		sides   [][]kv
		only    func(string, int) bool
		running []kv
		// before and kept are what Before and Kept give for each of
		// "a", "b", "c", "d".
		before, kept map[string]int
	}{
		{name: "the zero Map lends nothing"},
		{name: "a side's keeps are lent once it ends", sides: [][]kv{{{"a", 1}, {"b", 2}}},
			before: map[string]int{"a": 1, "b": 2}},
		{name: "the side just before only", sides: [][]kv{{{"a", 1}, {"b", 2}}, {{"c", 3}}},
			before: map[string]int{"c": 3}},
		{name: "a side that keeps nothing lends nothing", sides: [][]kv{{{"a", 1}}, {}}},
		{name: "the last kept under a key", sides: [][]kv{{{"a", 1}, {"a", 2}}},
			before: map[string]int{"a": 2}},
		{name: "a running side's keeps are kept, not lent", sides: [][]kv{{{"a", 1}}}, running: []kv{{"b", 2}, {"a", 3}},
			before: map[string]int{"a": 1}, kept: map[string]int{"b": 2, "a": 3}},
		{name: "only by key", sides: [][]kv{{{"a", 1}, {"b", 2}, {"c", 3}}}, only: notB,
			before: map[string]int{"a": 1, "c": 3}},
		{name: "only by value", sides: [][]kv{{{"a", 1}, {"b", 2}, {"c", 3}}}, only: func(_ string, v int) bool { return v < 3 },
			before: map[string]int{"a": 1, "b": 2}},
		{name: "only with nothing lent", only: notB},
		{name: "only leaves the running side's keeps", sides: [][]kv{{{"b", 1}}}, only: notB, running: []kv{{"b", 2}},
			kept: map[string]int{"b": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Map[string, int]
			for _, side := range tc.sides {
				for _, p := range side {
					m.Keep(p.k, p.v)
				}
				m.Done()
			}
			if tc.only != nil {
				m.Only(tc.only)
			}
			for _, p := range tc.running {
				m.Keep(p.k, p.v)
			}
			for _, k := range []string{"a", "b", "c", "d"} {
				v, ok := m.Before(k)
				want, wantOK := tc.before[k]
				require.Equal(t, wantOK, ok, "Before(%q)", k)
				require.Equal(t, want, v, "Before(%q)", k)
				v, ok = m.Kept(k)
				want, wantOK = tc.kept[k]
				require.Equal(t, wantOK, ok, "Kept(%q)", k)
				require.Equal(t, want, v, "Kept(%q)", k)
			}
		})
	}
}

// TestBeforeWhileKeeping: a side looks up what the side before kept on
// many goroutines while it keeps on its own (go test -race: the two never
// touch one map), and each sees what the side before kept.
func TestBeforeWhileKeeping(t *testing.T) {
	const n = 200
	var m Map[string, int]
	for i := range n {
		m.Keep(strconv.Itoa(i), i)
	}
	m.Done()
	var wg sync.WaitGroup
	seen := make([]int, 4)
	for g := range seen {
		wg.Go(func() {
			for i := range n {
				if v, ok := m.Before(strconv.Itoa(i)); ok && v == i {
					seen[g]++
				}
			}
		})
	}
	for i := range n {
		m.Keep(strconv.Itoa(i), -i)
	}
	wg.Wait()
	require.Equal(t, []int{n, n, n, n}, seen)
	m.Done()
	v, ok := m.Before("7")
	require.True(t, ok)
	require.Equal(t, -7, v)
}
