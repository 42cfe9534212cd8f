package rotate_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// checksOf renders fanOutInput(n, n, alerts) and returns how many
// signature checks the run asked for.
func checksOf(t *testing.T, n int, alerts bool) int {
	t.Helper()
	checks := 0
	p := rotate.CountingChecks(rotate.Processor{Now: func() time.Time { return testpki.GoldenNow }}, &checks)
	var out bytes.Buffer
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(fanOutInput(n, n, alerts)), Writer: &out, KeepReaderAnnotations: true}
	require.NoError(t, framework.Execute(rotate.Framework(p), rw))
	// Every leaf is listed for re-issue, and with alerts has its rule.
	require.Contains(t, out.String(), fmt.Sprintf("fan-out-leaf-%d", n-1))
	if alerts {
		require.Contains(t, out.String(), "kind: PrometheusRule")
	}
	return checks
}

// TestFanOutTimesLeavesIsLinear counts the signature checks of a whole
// render, not its time: a bundle fanned out to four times the namespaces
// over four times the leaves must cost about four times the checks, not
// sixteen (which a target looking at every leaf would cost), with and
// without spec.alerts (whose checks must not verify every leaf against
// every CA of every target).
func TestFanOutTimesLeavesIsLinear(t *testing.T) {
	const n = 20
	for _, alerts := range []bool{false, true} {
		t.Run(fmt.Sprintf("alerts=%v", alerts), func(t *testing.T) {
			small, large := checksOf(t, n, alerts), checksOf(t, 4*n, alerts)
			t.Logf("signature checks: %d for n=%d, %d for n=%d", small, n, large, 4*n)
			require.Positive(t, small)
			require.LessOrEqual(t, float64(large), 4.5*float64(small), "the checks grow faster than the input")
		})
	}
}
