// Package handover hands what one side of a change made to the side after
// it: `diff` reads, explains and models BASE, then HEAD, and what BASE made
// of what the change left alone - a file's objects, a package's
// explanation, what the model read of an object - HEAD takes instead of
// making it again. The sides run one after the other; within a side, what
// the side before made is looked up on every core while what this side
// makes is kept on one goroutine. It imports nothing of the module.
package handover

import "maps"

// Map is what one side kept, by key, lent to the side after it. Before
// looks up what the side before kept, Keep keeps what this side makes,
// Done ends a side and Only forgets, before a side runs, what it cannot
// take. The side before's map and this side's are two maps, so that
// looking up the one never races keeping in the other: Before may be
// called from any number of goroutines at once, beside Keep and Kept on
// one goroutine; Done and Only run alone. The zero Map lends nothing and
// is ready to keep.
type Map[K comparable, V any] struct {
	// prev is what the side before kept, only read while a side runs;
	// next what this side keeps.
	prev, next map[K]V
}

// Before returns what the side before kept under k, ok false when it kept
// nothing. It only reads: safe from many goroutines while a side runs.
func (m *Map[K, V]) Before(k K) (v V, ok bool) {
	v, ok = m.prev[k]
	return v, ok
}

// Kept returns what this side has kept under k so far, ok false when it
// has kept nothing under k. It is called on the goroutine that keeps.
func (m *Map[K, V]) Kept(k K) (v V, ok bool) {
	v, ok = m.next[k]
	return v, ok
}

// Keep keeps v under k for the side after this one (the last kept under a
// key wins). One goroutine at a time keeps; the side before's map is not
// touched.
func (m *Map[K, V]) Keep(k K, v V) {
	if m.next == nil {
		m.next = map[K]V{}
	}
	m.next[k] = v
}

// Done ends a side: what it kept is what the side after it is lent, and
// what the side before kept is let go.
func (m *Map[K, V]) Done() { m.prev, m.next = m.next, nil }

// Only forgets what the side before kept that the side to come cannot
// take - every entry for which take returns false - so that it is not held
// while that side runs, for nothing.
func (m *Map[K, V]) Only(take func(K, V) bool) {
	maps.DeleteFunc(m.prev, func(k K, v V) bool { return !take(k, v) })
}
