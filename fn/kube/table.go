package kube

import "slices"

// Table is rows in order, looked up by a key: the shape of the kind
// tables (TargetKinds, policy.WorkloadKinds). A key listed twice keeps its
// first row. The zero Table has no rows (IsZero); the tables that
// embed it read a zero value as the table rotate-certs ships.
type Table[K comparable, R any] struct {
	rows  []R
	index map[K]int
}

// NewTable returns a table of rows, each keyed by key.
func NewTable[K comparable, R any](key func(R) K, rows ...R) Table[K, R] {
	t := Table[K, R]{rows: rows, index: make(map[K]int, len(rows))}
	for i, r := range rows {
		if _, dup := t.index[key(r)]; !dup {
			t.index[key(r)] = i
		}
	}
	return t
}

// IsZero reports whether t is the zero Table.
func (t Table[K, R]) IsZero() bool { return t.index == nil }

// Rows returns a copy of the rows, in order.
func (t Table[K, R]) Rows() []R { return slices.Clone(t.rows) }

// Lookup returns the row of k.
func (t Table[K, R]) Lookup(k K) (R, bool) {
	i, ok := t.index[k]
	if !ok {
		var zero R
		return zero, false
	}
	return t.rows[i], true
}
