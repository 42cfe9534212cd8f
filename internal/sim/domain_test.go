package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFleetDomains: a fleet of clusters sharing an anchor, issuers
// re-issued on different days, rendered at the repository's top. With a
// trust domain no handshake between clusters fails; without it a cluster
// re-issued early drops the old anchor while another still presents
// certificates of it (the control row must fail, or the simulator could
// not see the outage).
func TestFleetDomains(t *testing.T) {
	if testing.Short() {
		t.Skip("renders a repository every simulated day")
	}
	for _, domain := range []bool{true, false} {
		st, err := RunFleet(FleetConfig{Clusters: 3, Days: 45, Period: 20, MaxReissueLag: 8, Seed: 1, Domain: domain})
		require.NoError(t, err)
		require.Positive(t, st.Handshakes)
		if domain {
			require.Zero(t, st.Failures, "%v", st.Examples)
		} else {
			require.Positive(t, st.Failures, "without a domain an early cluster drops the anchor a late one still needs")
		}
	}
}
