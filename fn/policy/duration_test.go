package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A count of days multiplied into a time.Duration wrapped around silently:
// retain.for 281474976710657d was one day (and dropped a previous CA the
// next day), warnWithin 9999999999999d a negative duration. Every duration
// is bounded by maxDuration (100 years), in both notations, and one beyond
// it is an error naming the field.
func TestDurationOverflowIsAnError(t *testing.T) {
	bundle := func(retainFor string) string {
		return "spec:\n  trustBundles:\n  - name: gw\n    sources: [{secret: {name: ca, namespace: ns}}]\n    target: {name: trust}\n    retain: {for: " + retainFor + "}\n"
	}
	tests := []struct {
		name, spec, field string
	}{
		{"days that wrap to one day", bundle("281474976710657d"), "spec.trustBundles[0].retain.for"},
		{"days that wrap negative", "spec:\n  expiry: {warnWithin: 9999999999999d}\n", "spec.expiry.warnWithin"},
		{"days beyond int64", "spec:\n  expiry: {warnWithin: 99999999999999999999d}\n", "spec.expiry.warnWithin"},
		{"days beyond the bound", bundle("36501d"), "spec.trustBundles[0].retain.for"},
		{"hours beyond the bound", "spec:\n  expiry: {failWithin: 876001h, warnWithin: 876001h}\n", "spec.expiry.warnWithin"},
		{"hours beyond time.Duration", "spec:\n  expiry: {warnWithin: 9999999999999h}\n", "spec.expiry.warnWithin"},
		{"negative days beyond the bound", "spec:\n  expiry: {failWithin: -9999999999999d}\n", "spec.expiry.failWithin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, err := decodeErrorsAt(t, tt.spec, tt.field)
			require.Contains(t, at, "out of range", "got %v", err)
		})
	}
	p, err := decode(t, bundle("36500d"))
	require.NoError(t, err, "the bound itself is allowed")
	require.Equal(t, maxDuration, p.Spec.TrustBundles[0].Retain.For.Duration)
}

func TestParseDuration(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"30d", 30 * 24 * time.Hour, ""},
		{"720h", 720 * time.Hour, ""},
		{"-2d", -48 * time.Hour, ""},
		{"36500d", maxDuration, ""},
		{"876000h", maxDuration, ""},
		{"36501d", 0, "out of range"},
		{"876001h", 0, "out of range"},
		{"281474976710657d", 0, "out of range"},
		{"9223372036854775808d", 0, "out of range"},
		{"2562048h", 0, "out of range"},
		{"3 weeks", 0, "invalid duration"},
		{"d", 0, "invalid duration"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			d, err := ParseDuration(tt.in)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, d)
		})
	}
}

// A duration too large for time.Duration is out of range; a typo stays a
// typo.
func TestParseDurationTellsOverflowFromTypos(t *testing.T) {
	for in, want := range map[string]string{
		"9999999999999h":   "out of range",
		"1h9999999999999m": "out of range",
		"3h4":              "invalid duration",
		"h":                "invalid duration",
		"1.5.h":            "invalid duration",
	} {
		_, err := ParseDuration(in)
		require.ErrorContains(t, err, want, in)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                        "0d",
		7 * 24 * time.Hour:       "7d",
		720 * time.Hour:          "30d",
		36 * time.Hour:           "1d12h",
		90 * time.Minute:         "1h30m",
		12 * time.Hour:           "12h",
		-48 * time.Hour:          "-2d",
		24*time.Hour + time.Hour: "1d1h",
	} {
		require.Equal(t, want, FormatDuration(d), "%v", d)
	}
}

// wideReport has rows in two packages with long names.
