package anchors

import (
	"crypto/x509"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

var (
	t0  = testpki.Date(2026, 1, 1)
	ca1 = testpki.NewCA("ca1", t0, testpki.Days(365))
	ca2 = testpki.NewCA("ca2", t0.Add(testpki.Days(90)), testpki.Days(365))
	ca3 = testpki.NewCA("ca3", t0.Add(testpki.Days(180)), testpki.Days(365))
	// leaf1 is signed by ca1 and valid until day 150.
	leaf1 = testpki.NewLeaf("leaf1", ca1, t0.Add(testpki.Days(60)), testpki.Days(90))
	leaf2 = testpki.NewLeaf("leaf2", ca2, t0.Add(testpki.Days(91)), testpki.Days(90))
)

func certs(cs ...testpki.Cert) []*x509.Certificate {
	out := make([]*x509.Certificate, len(cs))
	for i, c := range cs {
		out[i] = c.Cert
	}
	return out
}

func names(cs []*x509.Certificate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Subject.CommonName
	}
	return out
}

func day(n int) time.Time { return t0.Add(testpki.Days(n)) }

var defaults = Options{MaxPrevious: 1, ProtectIssuers: true}

// merge merges a target that carries no retirement record (every previous
// CA counts as retired at now) over an index of held.
func merge(current, previous []*x509.Certificate, held []Held, opts Options, now time.Time) (Outcome, error) {
	return MergeTarget(current, Memory{Certificates: previous}, NewChainIndex(held, nil), opts, now)
}

// heldOf places each certificate in a Secret named after it.
func heldOf(cs ...testpki.Cert) []Held {
	var out []Held
	for i, c := range cs {
		out = append(out, Held{Cert: c.Cert, Where: "Secret ns/" + c.Cert.Subject.CommonName, ID: i})
	}
	return out
}

// states lists the fates' states and drop reasons: "kept", "dropped: beyond retain.maxPrevious".
func states(o Outcome) []string {
	var out []string
	for _, f := range o.Fates {
		s := string(f.State)
		if f.Reason != "" {
			s += ": " + string(f.Reason)
		}
		out = append(out, s)
	}
	return out
}

func TestMergeRules(t *testing.T) {
	expired := testpki.NewCA("expired", t0.Add(-testpki.Days(400)), testpki.Days(365))
	future := testpki.NewCA("future", day(200), testpki.Days(365))
	renewed := testpki.NewCA("ca1", day(30), testpki.Days(730))
	tests := []struct {
		name     string
		current  []*x509.Certificate
		previous []*x509.Certificate
		leaves   []testpki.Cert
		opts     Options
		now      time.Time
		want     []string
		fates    []string
	}{
		{"first rotation keeps the old CA", certs(ca2), certs(ca1), nil, defaults, day(95), []string{"ca2", "ca1"}, []string{"unused"}},
		{"current order kept, duplicates once", certs(ca2, ca1, ca2), nil, nil, defaults, day(95), []string{"ca2", "ca1"}, nil},
		{"current certificate is never previous", certs(ca2), certs(ca2, ca1), nil, defaults, day(95), []string{"ca2", "ca1"}, []string{"unused"}},
		{"maxPrevious 1 drops the oldest", certs(ca3), certs(ca2, ca1), nil, defaults, day(185), []string{"ca3", "ca2"}, []string{"unused", "dropped: beyond retain.maxPrevious"}},
		{"maxPrevious 0 keeps none", certs(ca2), certs(ca1), nil, Options{MaxPrevious: 0}, day(95), []string{"ca2"}, []string{"dropped: beyond retain.maxPrevious"}},
		{"expired previous dropped", certs(ca2), certs(expired, ca1), nil, Options{MaxPrevious: 5}, day(95), []string{"ca2", "ca1"}, []string{"unused", "dropped: expired previous"}},
		{"expired current dropped", certs(expired, ca2), nil, nil, defaults, day(95), []string{"ca2"}, nil},
		{"not yet valid current kept", certs(ca2, future), nil, nil, defaults, day(95), []string{"ca2", "future"}, nil},
		{"retain.for never elapses in the render that retires", certs(ca2), certs(ca1), nil, Options{MaxPrevious: 1, RetainFor: testpki.Days(30)}, day(121), []string{"ca2", "ca1"}, []string{"unused"}},
		{"protected beyond maxPrevious", certs(ca3), certs(ca2, ca1), []testpki.Cert{leaf1}, defaults, day(140), []string{"ca3", "ca2", "ca1"}, []string{"unused", "protected"}},
		{"protectIssuers off", certs(ca3), certs(ca2, ca1), []testpki.Cert{leaf1}, Options{MaxPrevious: 1}, day(140), []string{"ca3", "ca2"}, []string{"unused", "dropped: beyond retain.maxPrevious"}},
		{"protected beyond retain.for", certs(ca2), certs(ca1), []testpki.Cert{leaf1}, Options{RetainFor: testpki.Days(1), ProtectIssuers: true}, day(140), []string{"ca2", "ca1"}, []string{"protected"}},
		{"expired leaf protects nothing", certs(ca2), certs(ca1), []testpki.Cert{leaf1}, Options{ProtectIssuers: true}, day(151), []string{"ca2"}, []string{"dropped: beyond retain.maxPrevious"}},
		// ca1 renewed with the same key and subject: leaf1 verifies against
		// the renewed CA, so the old certificate need not stay.
		{"leaf also trusted by a current CA protects nothing", []*x509.Certificate{renewed.Cert}, certs(ca1), []testpki.Cert{leaf1}, Options{MaxPrevious: 0, ProtectIssuers: true}, day(95), []string{"ca1"}, []string{"dropped: beyond retain.maxPrevious"}},
		{"Copy mode drops previous, remembers what Bundle keeps", certs(ca2), certs(ca1), []testpki.Cert{leaf1}, Options{Copy: true, MaxPrevious: 1, ProtectIssuers: true}, day(95), []string{"ca2"}, []string{"remembered"}},
		{"Copy mode drops previous, forgets what Bundle drops", certs(ca3), certs(ca2, ca1), nil, Options{Copy: true, MaxPrevious: 1}, day(185), []string{"ca3"}, []string{"remembered", "dropped: beyond retain.maxPrevious"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := merge(tt.current, tt.previous, heldOf(tt.leaves...), tt.opts, tt.now)
			require.NoError(t, err)
			// want lists the kept current certificates in source order,
			// then the kept previous ones, most recently retired first
			// (here all count as retired together, so newest NotBefore
			// first); the rendered order is canonical
			// (TestSameSetSameBytes).
			require.Equal(t, tt.want, names(append(append([]*x509.Certificate{}, out.Current...), out.Previous...)))
			require.ElementsMatch(t, tt.want, names(out.Certificates()))
			require.Equal(t, tt.fates, states(out))
		})
	}
}

// TestRetainFor: retain.for counts from the recorded retirement.
func TestRetainFor(t *testing.T) {
	mem := Memory{Certificates: certs(ca1), Retired: map[pki.Fingerprint]time.Time{pki.FingerprintOf(ca1.Cert): day(90)}, Recorded: true}
	opts := Options{MaxPrevious: 1, RetainFor: testpki.Days(30)}
	for _, tc := range []struct {
		now  time.Time
		want []string
	}{{day(119), []string{"unused"}}, {day(120), []string{"unused"}}, {day(121), []string{"dropped: retain.for elapsed"}}} {
		out, err := MergeTarget(certs(ca2), mem, nil, opts, tc.now)
		require.NoError(t, err)
		require.Equal(t, tc.want, states(out), "at %s", tc.now)
	}
}

func TestMergeErrors(t *testing.T) {
	expired := testpki.NewCA("expired", t0.Add(-testpki.Days(400)), testpki.Days(365))
	_, err := merge(certs(expired), certs(ca1), nil, defaults, day(10))
	require.ErrorContains(t, err, "every current certificate has expired")
	_, err = merge(nil, certs(ca1), nil, defaults, day(10))
	require.ErrorContains(t, err, "no certificate")
}

func TestProtectedWarningNamesTheLeaf(t *testing.T) {
	out, err := merge(certs(ca3), certs(ca2, ca1), []Held{{Cert: leaf1.Cert, Where: "Secret billing/client data.tls.crt"}}, defaults, day(140))
	require.NoError(t, err)
	require.Len(t, out.Fates, 2)
	f := out.Fates[1]
	require.Equal(t, FateProtected, f.State)
	require.Equal(t, "ca1", f.Cert.Subject.CommonName)
	require.Equal(t, "Secret billing/client data.tls.crt", f.Dependents[0].Where)
	require.Equal(t, "kept (protected by Secret billing/client data.tls.crt)", f.Verdict.String())
}

// verifyAgainst reports whether leaf chains to a root in bundle.
func verifyAgainst(leaf *x509.Certificate, bundle []*x509.Certificate, now time.Time) error {
	pool := x509.NewCertPool()
	for _, c := range bundle {
		pool.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err
}

// TestRotationKeepsOldLeavesVerifying walks CA1 -> CA2 -> CA3 feeding each
// output back as the next previous state, as a GitOps repo does.
func TestRotationKeepsOldLeavesVerifying(t *testing.T) {
	// CA1 -> CA2: leaves of both verify against the bundle.
	out, err := merge(certs(ca2), certs(ca1), nil, defaults, day(95))
	require.NoError(t, err)
	for _, leaf := range []testpki.Cert{leaf1, leaf2} {
		require.NoError(t, verifyAgainst(leaf.Cert, out.Certificates(), day(95)), "leaf %s", leaf.Cert.Subject.CommonName)
	}
	// CA2 -> CA3 with maxPrevious 1 and no leaf of CA1 left: CA1 is gone.
	out, err = merge(certs(ca3), out.Certificates(), heldOf(leaf2), defaults, day(185))
	require.NoError(t, err)
	require.Equal(t, []string{"ca3", "ca2"}, names(out.Certificates()))
	require.NoError(t, verifyAgainst(leaf2.Cert, out.Certificates(), day(150)))
	require.Error(t, verifyAgainst(leaf1.Cert, out.Certificates(), day(140)), "a leaf of the retired CA1 must no longer verify")
}

func TestOutputIsByteStable(t *testing.T) {
	a, err := merge(certs(ca2, ca1), certs(ca3), nil, Options{MaxPrevious: 2}, day(95))
	require.NoError(t, err)
	b, err := merge(certs(ca2, ca1, ca2), certs(ca3, ca1), nil, Options{MaxPrevious: 2}, day(95))
	require.NoError(t, err)
	require.Equal(t, string(a.PEM()), string(b.PEM()))
	require.Equal(t, string(pki.EncodePEM(certs(ca3, ca2, ca1))), string(a.PEM()), "newest NotBefore first")
	require.Equal(t, day(90), a.LatestNotBefore())
}

// TestSameSetSameBytes: however a set of certificates is split between
// current and previous, and in whatever order they come, the bundle's bytes
// are the same (no churn).
func TestSameSetSameBytes(t *testing.T) {
	renewed := testpki.NewCA("ca1", day(30), testpki.Days(730)) // same NotBefore as nothing else
	twin := testpki.NewCA("twin", ca2.Cert.NotBefore, testpki.Days(365))
	all := []*x509.Certificate{ca1.Cert, ca2.Cert, ca3.Cert, renewed.Cert, twin.Cert}
	want := ""
	for mask := 1; mask < 1<<len(all); mask++ { // every non-empty current subset
		var current, previous []*x509.Certificate
		for i, c := range all {
			if mask&(1<<i) != 0 {
				current = append(current, c)
			} else {
				previous = append(previous, c)
			}
		}
		for _, rev := range []bool{false, true} {
			if rev {
				slices.Reverse(current)
				slices.Reverse(previous)
			}
			out, err := merge(current, previous, nil, Options{MaxPrevious: len(all)}, day(100))
			require.NoError(t, err)
			got := string(out.PEM())
			if want == "" {
				want = got
			}
			require.Equal(t, want, got, "current mask %b reversed %v", mask, rev)
		}
	}
}

// BenchmarkMerge merges a 20-CA current set with 16 previous CAs and 1,000
// leaves to check for protection: the per-bundle cost of a render.
func BenchmarkMerge(b *testing.B) {
	var current, previous []*x509.Certificate
	for i := 0; i < 20; i++ {
		current = append(current, testpki.NewCA(fmt.Sprintf("cur-%d", i), t0, testpki.Days(365)).Cert)
	}
	for i := 0; i < 16; i++ {
		previous = append(previous, testpki.NewCA(fmt.Sprintf("prev-%d", i), t0, testpki.Days(365)).Cert)
	}
	issuer := testpki.NewCA("prev-3", t0, testpki.Days(365))
	var held []Held
	for i := 0; i < 1000; i++ {
		held = append(held, Held{Cert: testpki.NewLeaf(fmt.Sprintf("leaf-%d", i), issuer, t0, testpki.Days(90)).Cert, ID: i})
	}
	// cold: every signature checked; memoized: a later bundle of the same
	// run over the same CAs and leaves; fan-out: another target of a
	// bundle, whose answers the run's ChainIndex already holds.
	for _, tc := range []struct {
		name   string
		verify func(ca, cert *x509.Certificate) bool
		shared bool
	}{{"cold", nil, false}, {"memoized", NewVerifier(), false}, {"fan-out", NewVerifier(), true}} {
		b.Run(tc.name, func(b *testing.B) {
			opts := Options{MaxPrevious: 1, ProtectIssuers: true}
			shared := NewChainIndex(held, tc.verify)
			if tc.shared { // the first target of the bundle
				if _, err := MergeTarget(current, Memory{Certificates: previous}, shared, opts, day(30)); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				index := shared
				if !tc.shared {
					index = NewChainIndex(held, tc.verify)
				}
				if _, err := MergeTarget(current, Memory{Certificates: previous}, index, opts, day(30)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestMemoizedVerifierAgrees(t *testing.T) {
	v := NewVerifier()
	for _, tc := range []struct {
		ca, cert *x509.Certificate
		want     bool
	}{{ca1.Cert, leaf1.Cert, true}, {ca2.Cert, leaf1.Cert, false}, {ca2.Cert, leaf2.Cert, true}} {
		require.Equal(t, tc.want, v(tc.ca, tc.cert))
		require.Equal(t, tc.want, v(tc.ca, tc.cert), "second (memoized) answer")
	}
}
