package check

import (
	"bytes"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/why"
	"github.com/stretchr/testify/require"
)

func TestResolveThresholds(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name       string
		warn, fail *string
		wantWarn   time.Duration
		wantFail   time.Duration
		wantErr    string
	}{
		{"defaults", nil, nil, policy.DefaultWarnWithin, policy.DefaultFailWithin, ""},
		{"flags in days", s("10d"), s("2d"), 240 * time.Hour, 48 * time.Hour, ""},
		{"zero", s("0s"), s("0s"), 0, 0, ""},
		{"negative", s("-1h"), nil, 0, 0, "--warn-within \"-1h\": want a non-negative duration"},
		{"fail beyond warn", s("1d"), s("2d"), 0, 0, "--fail-within 2d is longer than --warn-within 1d"},
		{"not a duration", nil, s("soon"), 0, 0, "--fail-within \"soon\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var notes bytes.Buffer
			warn, fail, err := resolveThresholds(nil, tc.warn, tc.fail, exit.NewPrinter(&notes, "rotate-certs check"))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantWarn, warn)
			require.Equal(t, tc.wantFail, fail)
			require.Empty(t, notes.String(), "no policies, no note")
		})
	}
}

func TestDedupeReissuesKeepsFirstOfEachLeafAndBundle(t *testing.T) {
	a := why.Reissue{Bundle: "gw", Key: "tls.crt", SHA256: "aa", IssuerSHA256: "11"}
	b := a
	b.Bundle = "other"
	require.Equal(t, []why.Reissue{a, b}, dedupeReissues([]why.Reissue{a, b, a, b}))
}
