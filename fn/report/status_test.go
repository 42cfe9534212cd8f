package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/report"
	"github.com/rotate-certs/rotate-certs/internal/testitems"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

var now = testpki.GoldenNow

func TestStatusAt(t *testing.T) {
	day := 24 * time.Hour
	na := now.Add(10 * day)
	for _, tc := range []struct {
		at   time.Time
		want report.Status
	}{
		{now, report.StatusWarn},
		{na.Add(-7 * day), report.StatusFail},
		{na.Add(-7*day - time.Second), report.StatusWarn},
		{na.Add(-30 * day), report.StatusWarn},
		{na.Add(-30*day - time.Second), report.StatusOK},
		{na, report.StatusFail},
		{na.Add(time.Second), report.StatusExpired},
	} {
		require.Equal(t, tc.want, report.StatusAt(na, tc.at, 30*day, 7*day), "at %s", tc.at)
	}
}

func TestRenderTableColour(t *testing.T) {
	inv := inventory.Scan(testitems.Items(t, `apiVersion: v1
kind: Secret
metadata: {name: s, namespace: a}
data:
  ok.crt: {{b64 "ca-2026"}}
  old.crt: {{b64 "ca-expired"}}
`))
	rep := report.Build(inv, nil, nil, now, 30*24*time.Hour, 7*24*time.Hour)
	plain := string(report.RenderTable(rep, report.TableOptions{}))
	require.NotContains(t, plain, "\x1b[")
	coloured := string(report.RenderTable(rep, report.TableOptions{Color: true}))
	require.Contains(t, coloured, "\x1b[32mok\x1b[0m")
	require.Contains(t, coloured, "\x1b[2;31mexpired\x1b[0m")
	// Colour only in the last column: stripping it gives the plain table.
	require.Equal(t, plain, strings.NewReplacer("\x1b[32m", "", "\x1b[2;31m", "", "\x1b[0m", "").Replace(coloured))
}
