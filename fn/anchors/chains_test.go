package anchors

import (
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// A mesh's shape: an anchor signs an issuer, the issuer signs the leaves
// (which live in memory, or in git). Both anchors keep their subject, as
// Linkerd's root.linkerd.cluster.local does, and change their key.
var (
	anchorOld = testpki.NewSubjectCA("anchor-old", "root.mesh.test", day(0), testpki.Days(730))
	anchorNew = testpki.NewSubjectCA("anchor-new", "root.mesh.test", day(100), testpki.Days(730))
	issuerOld = testpki.NewIntermediate("issuer-old", "identity.mesh.test", anchorOld, day(0), testpki.Days(365))
	issuerNew = testpki.NewIntermediate("issuer-new", "identity.mesh.test", anchorNew, day(105), testpki.Days(365))
	// proxyOld is a workload certificate of the old issuer.
	proxyOld = testpki.NewLeaf("proxy-old", issuerOld, day(99), testpki.Days(30))
)

// meshInput is the input of a mesh halfway through its rotation: the
// issuer Secret (crt.pem), and a workload Secret whose tls.crt carries its
// leaf and the issuer that signed it (a chain).
func meshInput(issuer, leaf testpki.Cert) []Held {
	return []Held{
		{Cert: issuer.Cert, Where: "Secret mesh/identity-issuer data.crt.pem", ID: 0},
		{Cert: leaf.Cert, Where: "Secret apps/web data.tls.crt", ID: 1},
		{Cert: issuer.Cert, Where: "Secret apps/web data.tls.crt", ID: 2, Supplied: true},
	}
}

func wheres(hs []Held) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Where)
	}
	return out
}

func reissueRows(rs []Reissue) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s needs %s (%s, %s)", r.Cert.Where, r.IssuerName, r.State, r.LeavesAt.Format(time.DateOnly)))
	}
	return out
}

// TestIssuerProtectsTheAnchor: an issuer the old anchor signed keeps the
// old anchor beyond retain.for, although no leaf in the input names the
// anchor; the leaf that chains to it through the issuer does too, and
// the chain copy of the issuer is not listed on its own.
func TestIssuerProtectsTheAnchor(t *testing.T) {
	mem := Memory{Certificates: certs(anchorOld), Retired: map[pki.Fingerprint]time.Time{pki.FingerprintOf(anchorOld.Cert): day(100)}, Recorded: true}
	opts := Options{MaxPrevious: 1, RetainFor: 72 * time.Hour, ProtectIssuers: true}
	out, err := MergeTarget(certs(anchorNew), mem, NewChainIndex(meshInput(issuerOld, proxyOld), nil), opts, day(104))
	require.NoError(t, err)
	require.Equal(t, []string{"root.mesh.test"}, names(out.Previous), "the old anchor stays")
	f := out.Fates[0]
	require.Equal(t, FateProtected, f.State)
	require.Equal(t, []string{"Secret mesh/identity-issuer data.crt.pem", "Secret apps/web data.tls.crt"}, wheres(f.Dependents))
	require.Equal(t, "kept (protected by Secret mesh/identity-issuer data.crt.pem and Secret apps/web data.tls.crt)", f.Verdict.String())
	require.Equal(t, []string{
		"Secret mesh/identity-issuer data.crt.pem needs CN=root.mesh.test (protected, 2026-04-14)",
		"Secret apps/web data.tls.crt needs CN=root.mesh.test (protected, 2026-04-14)",
	}, reissueRows(out.Reissues()))

	// The same with the leaf only in memory (the mesh's case): the issuer
	// alone protects the anchor.
	out, err = MergeTarget(certs(anchorNew), mem, NewChainIndex(meshInput(issuerOld, proxyOld)[:1], nil), opts, day(104))
	require.NoError(t, err)
	require.Equal(t, FateProtected, out.Fates[0].State)

	// Before retain.for runs out, the anchor is kept until its date.
	out, err = MergeTarget(certs(anchorNew), mem, NewChainIndex(meshInput(issuerOld, proxyOld), nil), opts, day(101))
	require.NoError(t, err)
	require.Equal(t, "kept (retain.for until 2026-04-14)", out.Fates[0].Verdict.String())
	require.Equal(t, IssuerPending, out.Reissues()[0].State)
}

// TestReissuedIssuerFreesTheAnchor walks the mesh procedure: once the
// issuer is re-issued from the new anchor, nothing chains to the old one
// (unused); retain.dropUnusedAfter then drops it, and until then the
// verdict says when.
func TestReissuedIssuerFreesTheAnchor(t *testing.T) {
	proxyNew := testpki.NewLeaf("proxy-new", issuerNew, day(105), testpki.Days(30))
	mem := Memory{Certificates: certs(anchorOld), Retired: map[pki.Fingerprint]time.Time{pki.FingerprintOf(anchorOld.Cert): day(100)}, Recorded: true}
	opts := Options{MaxPrevious: 1, DropUnusedAfter: 7 * 24 * time.Hour, ProtectIssuers: true}
	index := NewChainIndex(meshInput(issuerNew, proxyNew), nil)

	out, err := MergeTarget(certs(anchorNew), mem, index, opts, day(106))
	require.NoError(t, err)
	require.Equal(t, FateUnused, out.Fates[0].State)
	require.Equal(t, "unused: safe to drop now (leaves on 2026-04-18)", out.Fates[0].Verdict.String())
	require.Empty(t, out.Reissues())

	out, err = MergeTarget(certs(anchorNew), mem, index, opts, day(107).Add(time.Second))
	require.NoError(t, err)
	require.Empty(t, out.Previous)
	require.Equal(t, "dropped (unused: retain.dropUnusedAfter elapsed)", out.Fates[0].Verdict.String())

	// dropUnusedAfter never drops a CA something still chains to.
	out, err = MergeTarget(certs(anchorNew), mem, NewChainIndex(meshInput(issuerOld, proxyOld), nil), opts, day(120))
	require.NoError(t, err)
	require.Equal(t, "kept (maxPrevious)", out.Fates[0].Verdict.String())
}

// TestBrokenChains: a certificate whose CA has left the bundle or expired
// is broken, never fine - in the render that drops the CA, at later
// renders (found by the name it was issued under), and below an expired
// intermediate or an expired current CA.
func TestBrokenChains(t *testing.T) {
	off := Options{MaxPrevious: 0}
	// The render that drops the old anchor (protectIssuers off).
	out, err := MergeTarget(certs(anchorNew), Memory{Certificates: certs(anchorOld)}, NewChainIndex(meshInput(issuerOld, proxyOld), nil), off, day(101))
	require.NoError(t, err)
	require.Empty(t, out.Previous)
	require.Equal(t, []string{
		"Secret mesh/identity-issuer data.crt.pem needs CN=root.mesh.test (broken, 2026-04-12)",
		"Secret apps/web data.tls.crt needs CN=root.mesh.test (broken, 2026-04-12)",
	}, reissueRows(out.Reissues()))

	// A later render: the old anchor is gone from the target, but the
	// issuer names root.mesh.test, which the bundle trusts under another
	// key: still broken.
	later, err := MergeTarget(certs(anchorNew), Memory{Certificates: certs(anchorNew)}, NewChainIndex(meshInput(issuerOld, proxyOld), nil), off, day(110))
	require.NoError(t, err)
	require.Equal(t, []string{
		"Secret mesh/identity-issuer data.crt.pem needs CN=root.mesh.test (broken, 2026-04-21)",
		"Secret apps/web data.tls.crt needs CN=root.mesh.test (broken, 2026-04-21)",
	}, reissueRows(later.Reissues()))
	require.Nil(t, later.Broken[0].Issuer, "the input does not hold the old anchor")

	// ... and when the input holds the old anchor (a ca.crt beside the
	// issuer), the entry names it.
	withAnchor := append(meshInput(issuerOld, proxyOld), Held{Cert: anchorOld.Cert, Where: "Secret mesh/identity-issuer data.ca.crt", ID: 3})
	later, err = MergeTarget(certs(anchorNew), Memory{Certificates: certs(anchorNew)}, NewChainIndex(withAnchor, nil), off, day(110))
	require.NoError(t, err)
	require.Len(t, later.Broken, 2)
	require.Equal(t, pki.FingerprintOf(anchorOld.Cert), pki.FingerprintOf(later.Broken[0].Issuer))

	// Below an expired intermediate of a current CA.
	short := testpki.NewIntermediate("short-issuer", "", anchorNew, day(100), testpki.Days(5))
	leaf := testpki.NewLeaf("under-short", short, day(101), testpki.Days(60))
	held := []Held{{Cert: short.Cert, Where: "Secret mesh/short data.tls.crt", ID: 0}, {Cert: leaf.Cert, Where: "Secret apps/x data.tls.crt", ID: 1}}
	out, err = MergeTarget(certs(anchorNew), Memory{}, NewChainIndex(held, nil), off, day(110))
	require.NoError(t, err)
	require.Equal(t, []string{"Secret apps/x data.tls.crt needs CN=short-issuer (broken, 2026-04-16)"}, reissueRows(out.Reissues()))

	// Below an expired current CA.
	gone := testpki.NewCA("gone", day(0), testpki.Days(50))
	held = []Held{{Cert: testpki.NewLeaf("orphan", gone, day(10), testpki.Days(90)).Cert, Where: "Secret apps/y data.tls.crt"}}
	out, err = MergeTarget(certs(gone, anchorNew), Memory{}, NewChainIndex(held, nil), off, day(60))
	require.NoError(t, err)
	require.Equal(t, []string{"Secret apps/y data.tls.crt needs CN=gone,O=rotate-certs test (broken, 2026-02-20)"}, reissueRows(out.Reissues()))

	// A certificate of an unrelated CA is none of the bundle's business.
	stranger := testpki.NewCA("stranger", day(0), testpki.Days(365))
	held = []Held{{Cert: testpki.NewLeaf("elsewhere", stranger, day(10), testpki.Days(200)).Cert, Where: "Secret apps/z data.tls.crt"}}
	out, err = MergeTarget(certs(anchorNew), Memory{}, NewChainIndex(held, nil), off, day(110))
	require.NoError(t, err)
	require.Empty(t, out.Reissues())
}

// TestChainsAreBySignature: an intermediate that names the old anchor but
// is signed by the new one chains to the new one; a chain through an
// intermediate found anywhere in the input counts; self-signed
// certificates chain to nothing.
func TestChainsAreBySignature(t *testing.T) {
	crossName := testpki.NewIntermediate("issuer-cross", "identity.mesh.test", anchorNew, day(100), testpki.Days(365))
	leaf := testpki.NewLeaf("proxy-cross", crossName, day(101), testpki.Days(30))
	index := NewChainIndex([]Held{
		{Cert: leaf.Cert, Where: "leaf", ID: 0},
		{Cert: crossName.Cert, Where: "issuer elsewhere", ID: 1},
		{Cert: anchorOld.Cert, Where: "a root", ID: 2},
	}, nil)
	current := index.rootSet(certs(anchorNew))
	require.True(t, index.chainsToAny(leaf.Cert, current, day(102)), "through the intermediate found in the input")
	require.False(t, index.chainsToAny(leaf.Cert, index.rootSet(certs(anchorOld)), day(102)), "same names, other key")
	require.False(t, index.chainsToAny(anchorOld.Cert, current, day(102)))
	require.Equal(t, []string{"leaf", "issuer elsewhere"}, wheres(index.SignedByAny(certs(anchorNew), day(102))))
}

// TestChainLoopsEnd: certificates that sign each other in a loop (two
// CAs cross-signed both ways) end the search instead of recursing.
func TestChainLoopsEnd(t *testing.T) {
	a := testpki.NewSubjectCA("loop-a", "loop-a", day(0), testpki.Days(365))
	b := testpki.NewSubjectCA("loop-b", "loop-b", day(0), testpki.Days(365))
	aByB := testpki.NewIntermediate("loop-a", "loop-a", b, day(0), testpki.Days(365))
	bByA := testpki.NewIntermediate("loop-b", "loop-b", a, day(0), testpki.Days(365))
	leaf := testpki.NewLeaf("loop-leaf", a, day(1), testpki.Days(30))
	index := NewChainIndex([]Held{{Cert: aByB.Cert, ID: 0}, {Cert: bByA.Cert, ID: 1}, {Cert: leaf.Cert, ID: 2}}, nil)
	require.False(t, index.chainsToAny(leaf.Cert, index.rootSet(certs(ca1)), day(2)))
	require.True(t, index.chainsToAny(leaf.Cert, index.rootSet(certs(b)), day(2)), "a, cross-signed by b, signed the leaf")
}

// fanOut merges n targets over n leaves the way a bundle fanned out to n
// namespaces does (current ca3; every target held ca2 and ca1; ca1 signed
// every leaf through an issuer, so it is protected) and lists their
// re-issues. It returns how many signatures were asked for.
func fanOut(t *testing.T, n int) int {
	t.Helper()
	issuer := testpki.NewIntermediate("fan-out-issuer", "", ca1, day(1), testpki.Days(300))
	held := []Held{{Cert: issuer.Cert, Where: "Secret mesh/issuer data.tls.crt", ID: 0}}
	for i := 0; i < n; i++ {
		leaf := testpki.NewLeaf(fmt.Sprintf("fan-out-leaf-%d", i), issuer, day(60), testpki.Days(90))
		held = append(held, Held{Cert: leaf.Cert, Where: fmt.Sprintf("Secret ns-%d/leaf data.tls.crt", i), ID: i + 1})
	}
	checks := 0
	index := NewChainIndex(held, func(ca, cert *x509.Certificate) bool {
		checks++
		return verifies(ca, cert)
	})
	for i := 0; i < n; i++ {
		out, err := MergeTarget(certs(ca3), Memory{Certificates: certs(ca2, ca1)}, index, defaults, day(140))
		require.NoError(t, err)
		require.Equal(t, FateProtected, out.Fates[1].State)
		require.Len(t, out.Fates[1].Dependents, n+1)
		require.Len(t, out.Reissues(), n+1)
	}
	return checks
}

// TestFanOutTimesLeavesIsLinear counts signature checks, not time: four
// times the targets and four times the leaves must cost about four times
// the checks (the certificates are indexed once per run), not sixteen.
func TestFanOutTimesLeavesIsLinear(t *testing.T) {
	const n = 25
	small, large := fanOut(t, n), fanOut(t, 4*n)
	t.Logf("signature checks: %d for n=%d, %d for n=%d", small, n, large, 4*n)
	require.Positive(t, small)
	require.LessOrEqual(t, float64(large), 4.5*float64(small), "the checks grow faster than the input")
}
