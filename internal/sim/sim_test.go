package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// shortDays is the short simulation run by `make test`: long enough for at
// least two rotations of every cadence (cadence 1 rotates on days 90 and
// 180). `make sim` runs three years.
const shortDays = 200

func TestSafeCadencesNeverFail(t *testing.T) {
	for _, c := range Cadences() {
		t.Run(fmt.Sprintf("cadence-%d", c.ID), func(t *testing.T) {
			t.Parallel()
			st, err := Run(Config{Cadence: c, Days: shortDays, Seed: 1})
			require.NoError(t, err)
			require.Equal(t, shortDays, st.Days)
			require.GreaterOrEqual(t, st.Rotations, 2, "the short run must cover rotations")
			require.Equal(t, shortDays*st.consumers()*len(st.peersOf()), st.Handshakes, "every consumer checks every peer every day")
			require.Zero(t, st.Failures, "a safe setting rejected a leaf its bundle had trusted: %s", strings.Join(st.Examples, "\n"))
			require.GreaterOrEqual(t, st.MaxBundle, 2, "an overlap must hold old and new CA")
			require.Positive(t, st.BundleChanges)
			require.Zero(t, st.Reorders, "the same set of certificates must render to the same bytes")
			if c.ID == 4 {
				require.Zero(t, st.Unpropagated, "a CA distributed 7 days ahead reaches every consumer (lag <= 3) before it signs")
			}
		})
	}
}

// The simulator must be able to fail: settings that drop an old CA too
// early (at once, or when a second signer rotates) break peers that still
// present a leaf of it.
func TestUnsafeSettingsFail(t *testing.T) {
	for _, tc := range []struct {
		cadence  int
		settings Settings
	}{
		{1, Settings{Mode: policy.ModeBundle, MaxPrevious: 0}},
		{1, Settings{Mode: policy.ModeCopy}},
		// Two signers rotating on the same day need two previous CAs.
		{2, Settings{Mode: policy.ModeBundle, MaxPrevious: 1}},
		// The mesh's control: without protectIssuers, retain.for lets the
		// old anchor go while the issuer in git still chains to it.
		{7, Settings{Mode: policy.ModeBundle, MaxPrevious: 1, RetainForDays: 1, NoProtectIssuers: true}},
		// protectIssuers keeps the anchor until the issuer is re-issued,
		// and no longer: the workloads' certificates of the old issuer,
		// which are not in git, outlive that render by a day or two.
		// dropUnusedAfter, not retain.for, ends a mesh's overlap.
		{7, Settings{Mode: policy.ModeBundle, MaxPrevious: 1, RetainForDays: 1}},
	} {
		c, err := CadenceByID(tc.cadence)
		require.NoError(t, err)
		t.Run(fmt.Sprintf("cadence-%d %s", tc.cadence, tc.settings), func(t *testing.T) {
			t.Parallel()
			st, err := Run(Config{Cadence: c, Days: shortDays, Seed: 1, Settings: &tc.settings})
			require.NoError(t, err)
			require.Positive(t, st.Failures, "dropping the previous CA must break handshakes")
			require.NotEmpty(t, st.Examples)
			require.Contains(t, st.Examples[0], "certificate signed by unknown authority")
		})
	}
}

func TestReproducible(t *testing.T) {
	c, err := CadenceByID(3)
	require.NoError(t, err)
	a, err := Run(Config{Cadence: c, Days: 130, Seed: 7})
	require.NoError(t, err)
	b, err := Run(Config{Cadence: c, Days: 130, Seed: 7})
	require.NoError(t, err)
	require.Equal(t, a, b, "the same seed must give the same run")
}

// Cadence 1 with a 0-day lag everywhere has nothing in flight: every
// check verifies a leaf whose CA the consumer already trusts.
func TestNoLagNoUnpropagated(t *testing.T) {
	c, err := CadenceByID(1)
	require.NoError(t, err)
	st, err := Run(Config{Cadence: c, Days: 100, Seed: 1, MaxLag: -1})
	require.NoError(t, err)
	require.Zero(t, st.Failures)
	require.Zero(t, st.Unpropagated)
}

func TestTrustHashCountsRolls(t *testing.T) {
	deploy := func(annotation string) []*yaml.RNode {
		s := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: gateway, namespace: sim}\nspec:\n  template:\n    metadata:\n      labels: {app: gateway}\n"
		if annotation != "" {
			s += "      annotations: {rotate-certs.dev/trust-hash: " + annotation + "}\n"
		}
		return []*yaml.RNode{yaml.MustParse(s)}
	}
	_, ok := trustHash(deploy(""))
	require.False(t, ok)
	h, ok := trustHash(deploy("sha256-abc"))
	require.True(t, ok)
	require.Equal(t, "sha256-abc", h)
}

// consumers returns the number of consumers of the run's bundle.
func (s Stats) consumers() int {
	if s.Cadence.fleet != nil {
		return s.Cadence.fleet.consumers
	}
	return 3
}

// peersOf returns the peers of the run's cadence.
func (s Stats) peersOf() []string {
	var out []string
	for _, sg := range s.Cadence.signers {
		out = append(out, sg.peers...)
	}
	return out
}

// Two signers on different cadences share one bundle with maxPrevious 2.
// On the day the slower signer rotates, the CA it just retired competes
// with CAs the faster signer retired earlier: those have the same or a
// newer NotBefore, so only the retirement record keeps the slower
// signer's CA, whose peers still present its leaves for a few days. The
// runs cover the slower signer's rotations (day 60, 120, ... and day 365).
func TestTwoSignerRotationDay(t *testing.T) {
	for _, tc := range []struct{ cadence, days int }{{5, 200}, {6, 380}} {
		c, err := CadenceByID(tc.cadence)
		require.NoError(t, err)
		t.Run(fmt.Sprintf("cadence-%d", tc.cadence), func(t *testing.T) {
			t.Parallel()
			for seed := uint64(1); seed <= 3; seed++ {
				st, err := Run(Config{Cadence: c, Days: tc.days, Seed: seed})
				require.NoError(t, err)
				require.Zero(t, st.Failures, "seed %d: the slower signer's just-retired CA lost its place: %s", seed, strings.Join(st.Examples, "\n"))
				require.GreaterOrEqual(t, st.MaxBundle, 4, "two current CAs and two previous ones")
			}
		})
	}
}

// A bundle 200 Deployments share, rolled in waves of 10% four days apart
// (cadence 8): no handshake fails, the pre-distributed CA reaches every
// consumer before it signs, no wave starts before the previous one has
// rolled out, and every consumer rolls once per trust change.
func TestFleetInWaves(t *testing.T) {
	c, err := CadenceByID(8)
	require.NoError(t, err)
	st, err := Run(Config{Cadence: c, Days: shortDays, Seed: 1})
	require.NoError(t, err)
	require.Zero(t, st.Failures, strings.Join(st.Examples, "\n"))
	require.Zero(t, st.Unpropagated, "ten waves and the lag fit in the 45 days of pre-distribution")
	require.Equal(t, 1, st.MaxWavesRolling, "one wave at a time")
	// Changes on days 45 (next CA in), 135 (next CA in) and 180 (oldest
	// out); the last roll-out has five of its ten waves by day 199.
	require.Equal(t, 3, st.BundleChanges)
	require.Equal(t, 200+200+100, st.Rolls, "each consumer rolls once per change, a wave of 20 every 4 days")
}

// The measure of waves rolling at once can fail: waves a day apart, with
// consumers taking up to three days to roll out, overlap.
func TestFleetWavesCanOverlap(t *testing.T) {
	c := fleetCadence()
	c.fleet = &fleet{consumers: 40, percent: 10, intervalDays: 1}
	st, err := Run(Config{Cadence: c, Days: 60, Seed: 1})
	require.NoError(t, err)
	require.Greater(t, st.MaxWavesRolling, 1)
}

// Waves too slow for the pre-distribution (cadence 8's control): ten
// waves a week apart (63 days and the lag) outlast the 45 days between the
// next CA's arrival and its first leaf, so consumers of the last waves,
// which read the bundle only when they roll, are handed leaves of a CA
// they do not hold yet. The simulator sees it: the same fleet with waves
// four days apart has none (TestFleetInWaves).
func TestFleetWavesSlowerThanPreDistribution(t *testing.T) {
	c, err := CadenceByID(8)
	require.NoError(t, err)
	st, err := Run(Config{Cadence: c, Days: shortDays, Seed: 1, Settings: &Settings{Mode: policy.ModeBundle, MaxPrevious: 1, WaveIntervalDays: 7}})
	require.NoError(t, err)
	require.Positive(t, st.Unpropagated, "the last waves roll after the new CA signs")
	require.Equal(t, 1, st.MaxWavesRolling)
}

// A mesh (cadence 7): the anchor signs an issuer in git, the issuer signs
// certificates that live in memory. With the safe settings the old anchor
// stays until the issuer is re-issued and dropUnusedAfter has passed, and
// leaves then: each rotation changes the bundle twice (the new anchor
// enters, the old one goes), and no workload certificate of the old
// issuer is ever rejected by a bundle that trusted its anchor.
func TestMeshIssuerChains(t *testing.T) {
	c, err := CadenceByID(7)
	require.NoError(t, err)
	for seed := uint64(1); seed <= 3; seed++ {
		st, err := Run(Config{Cadence: c, Days: shortDays, Seed: seed})
		require.NoError(t, err)
		require.Zero(t, st.Failures, "seed %d: %s", seed, strings.Join(st.Examples, "\n"))
		require.Equal(t, 2, st.MaxBundle, "the new anchor and the old one, never more")
		require.Equal(t, 2*st.Rotations, st.BundleChanges, "seed %d: the old anchor enters and leaves once per rotation", seed)
	}
}

// A mesh's dropUnusedAfter need not cover the time the issuer takes to be
// re-issued: it counts from the first render that finds nothing chaining
// to the old anchor, so 3 days - shorter than the issuer's 5-day delay,
// longer than the workloads' tail - has no failure. Counted from the
// retirement, it dropped the anchor in the render that saw the issuer
// re-issued, while the workloads still presented the old issuer's
// certificates.
func TestMeshDropUnusedAfterCountsFromReissue(t *testing.T) {
	c, err := CadenceByID(7)
	require.NoError(t, err)
	settings := Settings{Mode: policy.ModeBundle, MaxPrevious: 1, DropUnusedAfterDays: 3}
	for seed := uint64(1); seed <= 3; seed++ {
		st, err := Run(Config{Cadence: c, Days: shortDays, Seed: seed, Settings: &settings})
		require.NoError(t, err)
		require.Zero(t, st.Failures, "seed %d: %s", seed, strings.Join(st.Examples, "\n"))
		require.Equal(t, 2*st.Rotations, st.BundleChanges, "seed %d: the old anchor enters and leaves once per rotation", seed)
	}
}
