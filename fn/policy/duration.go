package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// Duration is a time.Duration written as a Go duration string ("720h",
// "90m") or a whole number of days ("90d"), the unit certificate lifetimes
// are usually given in.
type Duration struct {
	time.Duration
}

// maxDuration is the longest duration, either way, a policy or a flag may
// give: 100 years (36500d, 876000h). It is far beyond any certificate's
// life and far inside what a time.Duration holds (about 292 years), so a
// date plus or minus a duration never overflows, and a count of days too
// large to multiply into nanoseconds is an error instead of wrapping
// around (281474976710657d was one day).
const maxDuration = 36500 * 24 * time.Hour

// maxDays is maxDuration in days.
const maxDays = int64(maxDuration / (24 * time.Hour))

// ParseDuration parses a Go duration or "<n>d", at most maxDuration either
// way. Its errors say what is wrong without echoing a value that is not a
// plain word (it could be anything pasted into the field).
func ParseDuration(s string) (time.Duration, error) {
	want := "want a Go duration such as 720h or whole days such as 30d"
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return 0, outOfRange(s)
		}
		if err != nil {
			return 0, fmt.Errorf("invalid duration %s: %s", kube.Quote(s), want)
		}
		if n > maxDays || n < -maxDays {
			return 0, outOfRange(s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if goDuration.MatchString(s) {
			// time.ParseDuration refuses what overflows an int64 of
			// nanoseconds with the same words as a typo.
			return 0, outOfRange(s)
		}
		return 0, fmt.Errorf("invalid duration %s: %s", kube.Quote(s), want)
	}
	if d > maxDuration || d < -maxDuration {
		return 0, outOfRange(s)
	}
	return d, nil
}

func outOfRange(s string) error {
	return fmt.Errorf("duration %s is out of range: at most 36500d (100 years, 876000h) either way", kube.Quote(s))
}

// goDuration is the syntax of a Go duration: time.ParseDuration refuses
// what matches it only for its size.
var goDuration = regexp.MustCompile(`^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$`)

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as 720h or 30d")
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration in Go's notation.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.Duration.String())
}

// FormatDuration writes a duration for people, as ParseDuration reads it: whole days as days ("30d",
// "0d"), a part of a day after them ("1d12h"), shorter spans in Go
// notation without zero units ("90m", "1h30m").
func FormatDuration(d time.Duration) string {
	const dayLen = 24 * time.Hour
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	days, rest := d/dayLen, d%dayLen
	var b strings.Builder
	b.WriteString(sign)
	if days > 0 || rest == 0 {
		fmt.Fprintf(&b, "%dd", days)
	}
	if rest > 0 {
		s := rest.String() // e.g. 12h0m0s, 1h30m0s, 45m0s, 1.5s
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		b.WriteString(s)
	}
	return b.String()
}
