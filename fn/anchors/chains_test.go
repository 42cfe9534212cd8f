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

// unusedStep is one render of a walk over a target with the old anchor
// as its previous CA: the issuer the input holds at now, the old anchor's
// expected unused entry (zero: none), its verdict, and whether it left.
type unusedStep struct {
	name    string
	now     time.Time
	issuer  testpki.Cert
	since   time.Time
	verdict string
	gone    bool
}

// walkUnused renders each step over what the step before wrote, starting
// from mem, and checks each render is a fixed point: rendering its own
// output again at the same time gives the same bundle and records.
func walkUnused(t *testing.T, mem Memory, opts Options, steps []unusedStep) {
	t.Helper()
	oldFP := pki.FingerprintOf(anchorOld.Cert)
	for _, s := range steps {
		index := NewChainIndex(meshInput(s.issuer, proxyOld)[:1], nil)
		out, err := MergeTarget(certs(anchorNew), mem, index, opts, s.now)
		require.NoError(t, err, s.name)
		require.Equal(t, s.verdict, out.Fates[0].Verdict.String(), s.name)
		require.Equal(t, s.gone, len(out.Previous) == 0, s.name)
		want := []Retirement{}
		if !s.since.IsZero() {
			want = []Retirement{{oldFP, s.since}}
		}
		require.Equal(t, want, out.UnusedRecord(), s.name)
		again, err := MergeTarget(certs(anchorNew), record(out), index, opts, s.now)
		require.NoError(t, err, s.name)
		require.Equal(t, out.PEM(), again.PEM(), "%s: a fixed point", s.name)
		require.Equal(t, out.Record(), again.Record(), "%s: a fixed point", s.name)
		require.Equal(t, out.UnusedRecord(), again.UnusedRecord(), "%s: a fixed point", s.name)
		mem = record(out)
	}
}

// TestReissuedIssuerFreesTheAnchor walks Linkerd's manual procedure with
// retain.dropUnusedAfter: 24h. The anchor is rotated on day 105 and the
// issuer re-issued on day 108: nothing in the input chains to the old
// anchor from then on, but every proxy still holds a certificate of the
// old issuer for up to a day. The count starts on day 108, the first
// render that finds the anchor unused; counted from the retirement, the
// day-108 render dropped the anchor at once.
func TestReissuedIssuerFreesTheAnchor(t *testing.T) {
	opts := Options{MaxPrevious: 1, DropUnusedAfter: 24 * time.Hour, ProtectIssuers: true}
	reissue := day(108)
	leaves := "unused: safe to drop now (leaves on 2026-04-20)"
	walkUnused(t, Memory{Certificates: certs(anchorOld)}, opts, []unusedStep{
		{"day 105: the anchor rotated, the issuer still on the old one", day(105), issuerOld, time.Time{}, "kept (maxPrevious)", false},
		{"day 107: not re-issued yet", day(107), issuerOld, time.Time{}, "kept (maxPrevious)", false},
		{"day 108: re-issued, unused from this render", reissue, issuerNew, reissue, leaves, false},
		{"day 108 + 23h: within dropUnusedAfter", reissue.Add(23 * time.Hour), issuerNew, reissue, leaves, false},
		{"day 109: the deadline itself", day(109), issuerNew, reissue, leaves, false},
		{"day 109 + 1m: dropped, and its entry with it", day(109).Add(time.Minute), issuerNew, time.Time{}, "dropped (unused: retain.dropUnusedAfter elapsed)", true},
	})
}

// TestUnusedRecord: the unused entry is cleared when something chains to
// the CA again, starts at the first render for a CA already unused
// there, and an edited entry is never after now nor before the
// retirement - so an edit can at worst end the overlap where counting
// from the retirement would. Without dropUnusedAfter nothing is recorded.
func TestUnusedRecord(t *testing.T) {
	opts := Options{MaxPrevious: 1, DropUnusedAfter: 24 * time.Hour, ProtectIssuers: true}
	oldFP := pki.FingerprintOf(anchorOld.Cert)
	at := func(retired, unused time.Time) Memory {
		return Memory{Certificates: certs(anchorNew, anchorOld), Recorded: true,
			Retired: map[pki.Fingerprint]time.Time{oldFP: retired}, Unused: map[pki.Fingerprint]time.Time{oldFP: unused}}
	}
	used := "kept (maxPrevious)"
	for _, tc := range []struct {
		name  string
		mem   Memory
		opts  Options
		steps []unusedStep
	}{
		{"used again: the entry is cleared, and starts anew", at(day(105), day(108)), opts, []unusedStep{
			{"issuer rolled back to the old anchor", day(108).Add(12 * time.Hour), issuerOld, time.Time{}, used, false},
			{"re-issued again", day(108).Add(20 * time.Hour), issuerNew, day(108).Add(20 * time.Hour), "unused: safe to drop now (leaves on 2026-04-20)", false},
			{"a day after the first re-issue: kept", day(109).Add(time.Hour), issuerNew, day(108).Add(20 * time.Hour), "unused: safe to drop now (leaves on 2026-04-20)", false},
		}},
		{"already unused at the first render: counts from it", Memory{Certificates: certs(anchorOld)}, opts, []unusedStep{
			{"first render", day(108), issuerNew, day(108), "unused: safe to drop now (leaves on 2026-04-20)", false},
		}},
		{"an entry after now counts from now", at(day(105), day(200)), opts, []unusedStep{
			{"edited into the future", day(108), issuerNew, day(108), "unused: safe to drop now (leaves on 2026-04-20)", false},
		}},
		{"an entry before the retirement counts from the retirement", at(day(105), day(50)), opts, []unusedStep{
			{"edited into the past", day(105).Add(12 * time.Hour), issuerNew, day(105), "unused: safe to drop now (leaves on 2026-04-17)", false},
			{"retain ends as counted from the retirement", day(108), issuerNew, time.Time{}, "dropped (unused: retain.dropUnusedAfter elapsed)", true},
		}},
		{"without dropUnusedAfter nothing is recorded", at(day(105), day(106)), Options{MaxPrevious: 1}, []unusedStep{
			{"unused, kept by maxPrevious", day(108), issuerNew, time.Time{}, "unused: safe to drop now (leaves on 2028-01-01)", false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { walkUnused(t, tc.mem, tc.opts, tc.steps) })
	}
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
	require.Nil(t, later.Broken[0].issuer, "the input does not hold the old anchor")

	// ... and when the input holds the old anchor (a ca.crt beside the
	// issuer), the entry names it.
	withAnchor := append(meshInput(issuerOld, proxyOld), Held{Cert: anchorOld.Cert, Where: "Secret mesh/identity-issuer data.ca.crt", ID: 3})
	later, err = MergeTarget(certs(anchorNew), Memory{Certificates: certs(anchorNew)}, NewChainIndex(withAnchor, nil), off, day(110))
	require.NoError(t, err)
	require.Len(t, later.Broken, 2)
	require.Equal(t, pki.FingerprintOf(anchorOld.Cert), pki.FingerprintOf(later.Broken[0].issuer))

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
