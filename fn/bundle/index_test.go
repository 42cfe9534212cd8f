package bundle

import (
	"crypto/x509"
	"fmt"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// fanOut merges n targets over n leaves the way a bundle fanned out to n
// namespaces does (current ca3; every target held ca2 and ca1; ca1 signed
// every leaf, so it is protected) and lists their re-issues. It returns
// how many signatures were asked for.
func fanOut(t *testing.T, n int) int {
	t.Helper()
	var leaves []Leaf
	for i := 0; i < n; i++ {
		leaf := testpki.NewLeaf(fmt.Sprintf("fan-out-leaf-%d", i), ca1, day(60), testpki.Days(90))
		leaves = append(leaves, Leaf{Cert: leaf.Cert, Where: fmt.Sprintf("Secret ns-%d/leaf data.tls.crt", i)})
	}
	checks := 0
	opts := Options{MaxPrevious: 1, ProtectIssuers: true, Verify: func(ca, cert *x509.Certificate) bool {
		checks++
		return Verifies(ca, cert)
	}}
	index := NewLeafIndex(leaves)
	for i := 0; i < n; i++ {
		out, err := Merge(certs(ca3), certs(ca2, ca1), index, opts, day(140))
		require.NoError(t, err)
		require.Len(t, out.Decisions, 1)
		require.Equal(t, KeptProtected, out.Decisions[0].Reason)
		require.Len(t, out.Decisions[0].Leaves, n)
		require.Len(t, out.Reissues(index, opts, day(140)), n)
	}
	return checks
}

// TestFanOutTimesLeavesIsLinear counts signature checks, not time: four
// times the targets and four times the leaves must cost about four times
// the checks (the leaves are indexed once per run), not sixteen.
func TestFanOutTimesLeavesIsLinear(t *testing.T) {
	const n = 25
	small, large := fanOut(t, n), fanOut(t, 4*n)
	t.Logf("signature checks: %d for n=%d, %d for n=%d", small, n, large, 4*n)
	require.Positive(t, small)
	require.LessOrEqual(t, float64(large), 4.5*float64(small), "the checks grow faster than the input")
}

func TestLeafIndex(t *testing.T) {
	leaf3 := testpki.NewLeaf("leaf3", ca1, day(200), testpki.Days(90)) // not yet valid at day 100, valid at 250
	l1, l2, l3 := Leaf{Cert: leaf1.Cert, Where: "a"}, Leaf{Cert: leaf2.Cert, Where: "b"}, Leaf{Cert: leaf3.Cert, Where: "c"}
	index := NewLeafIndex([]Leaf{l1, l2, l3})
	for _, tc := range []struct {
		name string
		got  []Leaf
		want []Leaf
	}{
		{"ca1 signed leaf1 and leaf3", index.SignedBy(ca1.Cert, nil), []Leaf{l1, l3}},
		{"asked again", index.SignedBy(ca1.Cert, nil), []Leaf{l1, l3}},
		{"ca3 signed none", index.SignedBy(ca3.Cert, nil), nil},
		{"any of ca2, ca1, in input order", index.SignedByAny(certs(ca2, ca1), nil), []Leaf{l1, l2, l3}},
		{"any of a repeated CA, once", index.SignedByAny(certs(ca1, ca1), nil), []Leaf{l1, l3}},
		{"nil index", (*LeafIndex)(nil).SignedBy(ca1.Cert, nil), nil},
		// leaf1 expires at day 150: only leaf3 depends on ca1 at day 250.
		{"dependents at day 100", index.dependents(ca1.Cert, certs(ca3), day(100), nil), []Leaf{l1, l3}},
		{"dependents at day 250", index.dependents(ca1.Cert, certs(ca3), day(250), nil), []Leaf{l3}},
		{"a current CA that signed them protects", index.dependents(ca1.Cert, certs(ca1), day(100), nil), nil},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, tc.got) })
	}
	require.Equal(t, []Leaf{l1, l2, l3}, index.Leaves())
}
