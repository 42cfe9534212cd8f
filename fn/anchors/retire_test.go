package anchors

import (
	"crypto/x509"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// record turns an outcome's records into the Memory of the target it was
// written to, as the next render reads it back.
func record(o Outcome) Memory {
	m := Memory{Certificates: o.Certificates(), Retired: map[pki.Fingerprint]time.Time{}, Recorded: true, Unused: map[pki.Fingerprint]time.Time{}}
	for _, e := range o.Record() {
		m.Retired[e.SHA256] = e.At
	}
	for _, e := range o.UnusedRecord() {
		m.Unused[e.SHA256] = e.At
	}
	m.Remembered = o.Remembered
	return m
}

// TestTwoSignerDay: signer A rotates every 30 days, signer B every 60,
// both from day 0, with year-long CAs and maxPrevious 2. On day 60 both
// rotate: B's just-retired CA b0 has the same NotBefore as a0, which A
// retired on day 30. Ranking by dates of the certificates would keep a0
// or b0 by fingerprint; the record keeps b0, whose peers still present
// its leaves.
func TestTwoSignerDay(t *testing.T) {
	year := testpki.Days(365)
	a0, a1, a2 := testpki.NewCA("a0", day(0), year), testpki.NewCA("a1", day(30), year), testpki.NewCA("a2", day(60), year)
	b0, b1 := testpki.NewCA("b0", day(0), year), testpki.NewCA("b1", day(60), year)
	opts := Options{MaxPrevious: 2}

	// Day 0 (no previous state), day 30 (A rotates), day 60 (both do),
	// each render reading the one before.
	out, err := MergeTarget(certs(a0, b0), Memory{}, nil, opts, day(0))
	require.NoError(t, err)
	require.Empty(t, out.Record())
	out, err = MergeTarget(certs(a1, b0), record(out), nil, opts, day(30))
	require.NoError(t, err)
	require.Equal(t, []string{"a0"}, names(out.Previous))
	require.Equal(t, []Retirement{{pki.FingerprintOf(a0.Cert), day(30)}}, out.Record())
	out, err = MergeTarget(certs(a2, b1), record(out), nil, opts, day(60))
	require.NoError(t, err)
	require.Equal(t, []string{"a1", "b0"}, names(out.Previous), "both retired on day 60, newest NotBefore first")
	require.Len(t, out.Fates, 3)
	require.Equal(t, "a0", out.Fates[2].Cert.Subject.CommonName)
	require.Equal(t, FateDropped, out.Fates[2].State)
	require.Equal(t, droppedMaxPrevious, out.Fates[2].Reason)

	// Without the record every previous CA counts as retired on day 60
	// (this render): a0 and b0 tie, and one of them is dropped by
	// fingerprint alone. This is the failure the record prevents.
	blind, err := merge(certs(a2, b1), certs(a1, b0, a0), nil, opts, day(60))
	require.NoError(t, err)
	require.Len(t, blind.Previous, 2)
	require.Equal(t, "a1", blind.Previous[0].Subject.CommonName)
	require.Contains(t, []string{"a0", "b0"}, blind.Previous[1].Subject.CommonName)
}

// TestRetirementFallback: the retirement of a previous CA the record does
// not list is this render's now, record or not: the overlap starts when
// rotate-certs first sees the CA leave.
func TestRetirementFallback(t *testing.T) {
	// The new CA was backdated by a day, as Envoy Gateway's certgen does,
	// and the rotation is rendered on day 95.
	backdated := testpki.NewCA("backdated", day(94), testpki.Days(365))
	future := testpki.NewCA("future", day(200), testpki.Days(365))
	for _, tc := range []struct {
		name    string
		current []*x509.Certificate
		mem     Memory
		want    time.Time
	}{
		{"no record: retired at this render, not at the new CA's NotBefore", certs(backdated), Memory{Certificates: certs(ca1)}, day(95)},
		{"no record, a current CA not yet valid: this render", []*x509.Certificate{backdated.Cert, future.Cert}, Memory{Certificates: certs(ca1)}, day(95)},
		{"a record without the CA: it was current at the last render, retired now", certs(backdated), Memory{Certificates: certs(ca1), Recorded: true}, day(95)},
		{"the recorded time", certs(backdated), Memory{Certificates: certs(ca1), Retired: map[pki.Fingerprint]time.Time{pki.FingerprintOf(ca1.Cert): day(50)}}, day(50)},
		{"a recorded time after now reads as now", certs(backdated), Memory{Certificates: certs(ca1), Retired: map[pki.Fingerprint]time.Time{pki.FingerprintOf(ca1.Cert): day(300)}, Recorded: true}, day(95)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := MergeTarget(tc.current, tc.mem, nil, Options{MaxPrevious: 1}, day(95))
			require.NoError(t, err)
			at, ok := out.retiredAt(ca1.Cert)
			require.True(t, ok)
			require.Equal(t, tc.want, at)
			require.Equal(t, []Retirement{{pki.FingerprintOf(ca1.Cert), tc.want}}, out.Record())
		})
	}
}

// TestFirstRenderStartsTheOverlap: a repository adopts rotate-certs at the
// very rotation - the anchor was cut two days before anyone committed it,
// the target has no record, and retain.for is 24h. The old CA must stay
// for the 24 hours after this render, not be dropped because the new
// CA's NotBefore is two days old.
func TestFirstRenderStartsTheOverlap(t *testing.T) {
	cut := testpki.NewCA("cut-two-days-ago", day(93), testpki.Days(365))
	opts := Options{MaxPrevious: 1, RetainFor: 24 * time.Hour, ProtectIssuers: true}
	first, err := MergeTarget(certs(cut), Memory{Certificates: certs(ca1)}, nil, opts, day(95))
	require.NoError(t, err)
	require.Equal(t, []string{"ca1"}, names(first.Previous), "the first render keeps the old CA")
	require.Equal(t, "unused: safe to drop now (leaves on 2026-04-07)", first.Fates[0].Verdict.String())
	later, err := MergeTarget(certs(cut), record(first), nil, opts, day(95).Add(24*time.Hour))
	require.NoError(t, err)
	require.Equal(t, []string{"ca1"}, names(later.Previous), "kept for the whole retain.for")
	gone, err := MergeTarget(certs(cut), record(first), nil, opts, day(96).Add(time.Second))
	require.NoError(t, err)
	require.Empty(t, gone.Previous, "dropped once retain.for has run out since this render")
}

// TestRetainForCountsFromRetirement: with a backdated new CA, retain.for
// 24h keeps the old CA for 24 hours after the render that retired it, not
// for 24 hours after the new CA's NotBefore.
func TestRetainForCountsFromRetirement(t *testing.T) {
	backdated := testpki.NewCA("backdated", day(94), testpki.Days(365))
	opts := Options{MaxPrevious: 1, RetainFor: 24 * time.Hour}
	rotation := day(95).Add(-time.Hour) // rendered 23 hours after the new CA's NotBefore
	out, err := MergeTarget(certs(backdated), Memory{Certificates: certs(backdated, ca1), Recorded: true}, nil, opts, rotation)
	require.NoError(t, err)
	require.Equal(t, []string{"ca1"}, names(out.Previous))
	for _, tc := range []struct {
		at   time.Time
		kept bool
	}{{rotation.Add(2 * time.Hour), true}, {rotation.Add(24 * time.Hour), true}, {rotation.Add(24*time.Hour + time.Second), false}} {
		later, err := MergeTarget(certs(backdated), record(out), nil, opts, tc.at)
		require.NoError(t, err)
		require.Equal(t, tc.kept, len(later.Previous) == 1, "at %s", tc.at)
	}
}

// TestRecordSurvivesLaterRenders: feeding an outcome back with a later now
// and the same sources keeps the set and the record unchanged.
func TestRecordSurvivesLaterRenders(t *testing.T) {
	opts := Options{MaxPrevious: 2, ProtectIssuers: true}
	out, err := MergeTarget(certs(ca3), Memory{Certificates: certs(ca3, ca2, ca1)}, nil, opts, day(185))
	require.NoError(t, err)
	want, wantPEM := out.Record(), string(out.PEM())
	for _, d := range []int{186, 200, 300} {
		out, err = MergeTarget(certs(ca3), record(out), nil, opts, day(d))
		require.NoError(t, err)
		require.Equal(t, want, out.Record(), "day %d", d)
		require.Equal(t, wantPEM, string(out.PEM()), "day %d", d)
	}
}

// TestCopyRemembersWhatBundleKeeps: Copy mode writes only the current CAs,
// and remembers exactly the previous CAs, and their retirements, that
// Bundle mode would keep; reading them back in Bundle mode restores the
// bundle.
func TestCopyRemembersWhatBundleKeeps(t *testing.T) {
	mem := Memory{Certificates: certs(ca3, ca2, ca1), Retired: map[pki.Fingerprint]time.Time{pki.FingerprintOf(ca1.Cert): day(100)}, Recorded: true}
	leaves := NewChainIndex([]Held{{Cert: leaf1.Cert, Where: "Secret a/b data.tls.crt"}}, nil)
	bundle := Options{MaxPrevious: 0, ProtectIssuers: true}
	copyMode := bundle
	copyMode.Copy = true
	b, err := MergeTarget(certs(ca3), mem, leaves, bundle, day(140))
	require.NoError(t, err)
	c, err := MergeTarget(certs(ca3), mem, leaves, copyMode, day(140))
	require.NoError(t, err)
	require.Equal(t, []string{"ca1"}, names(b.Previous), "ca1 is protected by leaf1, ca2 exceeds maxPrevious 0")
	require.Empty(t, c.Previous)
	require.Equal(t, names(b.Previous), names(c.Remembered))
	require.Equal(t, b.Record(), c.Record())
	require.Equal(t, []string{"ca3"}, names(c.Certificates()))

	require.Empty(t, b.Restored, "the data held ca1: carried, not restored")
	require.Empty(t, c.Restored, "Copy mode restores nothing")

	back, err := MergeTarget(certs(ca3), record(c), leaves, bundle, day(140))
	require.NoError(t, err)
	require.Equal(t, string(b.PEM()), string(back.PEM()))
	require.Equal(t, b.Record(), back.Record())
	require.Equal(t, []string{"ca1"}, names(back.Restored), "Bundle mode restores ca1 from the Copy memory")
}

// TestRestoredOnlyFromCopyMemory: a CA enters the bundle only from the
// sources, the target's data or the Copy memory, and only the last is
// Restored; a remembered CA that the data also holds, or that is current,
// is not restored, and one that the rules drop is not either.
func TestRestoredOnlyFromCopyMemory(t *testing.T) {
	mem := Memory{Certificates: certs(ca3, ca2), Remembered: certs(ca2, ca1, ca3), Recorded: true}
	out, err := MergeTarget(certs(ca3), mem, nil, Options{MaxPrevious: 2}, day(185))
	require.NoError(t, err)
	require.Equal(t, []string{"ca3", "ca2", "ca1"}, names(out.Certificates()))
	require.Equal(t, []string{"ca1"}, names(out.Restored))

	out, err = MergeTarget(certs(ca3), mem, nil, Options{MaxPrevious: 1}, day(185))
	require.NoError(t, err)
	require.Equal(t, []string{"ca3", "ca2"}, names(out.Certificates()))
	require.Empty(t, out.Restored, "ca1 is dropped by maxPrevious: nothing is restored")
}
