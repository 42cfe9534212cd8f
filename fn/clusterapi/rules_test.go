package clusterapi

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

func TestCheckExpiryDays(t *testing.T) {
	tests := []struct {
		days, validity int
		set            bool
		wantErr        string
	}{
		{days: 7},
		{days: 6, wantErr: "6 is below 7"},
		{days: 0, wantErr: "0 is below 7"},
		{days: 364},
		{days: 365, wantErr: "must be less than 365, the default certificate validity"},
		{days: 29, validity: 30, set: true},
		{days: 30, validity: 30, set: true, wantErr: "must be less than certificateValidityPeriodDays (30)"},
		{days: 31, validity: 30, set: true, wantErr: "must be less than certificateValidityPeriodDays (30)"},
		{days: 400, validity: 730, set: true},
		{days: 6, validity: 730, set: true, wantErr: "6 is below 7"},
	}
	for _, tt := range tests {
		err := checkExpiryDays(tt.days, tt.validity, tt.set)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("checkExpiryDays(%d, %d, %v) = %v, want nil", tt.days, tt.validity, tt.set, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("checkExpiryDays(%d, %d, %v) = %v, want %q", tt.days, tt.validity, tt.set, err, tt.wantErr)
		}
	}
}

func TestDueMatchesClusterAPI(t *testing.T) {
	// KCP rolls when now + days is strictly after the expiry.
	days := 30
	tests := []struct {
		expiry time.Time
		want   bool
	}{
		{now.Add(30*24*time.Hour - time.Second), true},
		{now.Add(30 * 24 * time.Hour), false},
		{now.Add(31 * 24 * time.Hour), false},
		{now.Add(-time.Hour), true},
	}
	for _, tt := range tests {
		if got := isDue(tt.expiry, now, days); got != tt.want {
			t.Errorf("isDue(%s) = %v, want %v", tt.expiry, got, tt.want)
		}
	}
	if isDue(expiryIn(29, now), now, 30) != true || isDue(expiryIn(30, now), now, 30) != false {
		t.Error("expiresInDays 29 must be due in a 30-day window, 30 must not")
	}
}

func ev(machine, value string, expiry time.Time) evidence {
	return evidence{Machine: machine, Source: "Machine ns/" + machine + " status.certificatesExpiryDate", Value: value, Expiry: expiry}
}

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// etcdEvidence is three etcd machines: etcd-a 18 days from expiry at now,
// etcd-b 38 days, etcd-c half a year.
func etcdEvidence() (a, b, c evidence) {
	return ev("etcd-a", "2026-12-10T00:00:00Z", day(2026, 12, 10)),
		ev("etcd-b", "2026-12-30T00:00:00Z", day(2026, 12, 30)),
		ev("etcd-c", "2027-06-01T00:00:00Z", day(2027, 6, 1))
}

// TestDecideRoll: when a roll starts, which machines it covers, and that its
// name holds while the same machines stay.
func TestDecideRoll(t *testing.T) {
	a, b, c := etcdEvidence()

	if _, ok := decideRoll("tmpl-1", []evidence{c}, nil, now, 30, nil); ok {
		t.Error("nothing inside the window must not roll")
	}
	if _, ok := decideRoll("tmpl-1", nil, nil, now, 30, nil); ok {
		t.Error("no evidence must not roll")
	}
	r, ok := decideRoll("tmpl-1", []evidence{c, b, a}, nil, now, 30, nil)
	if !ok || r.InProgress {
		t.Fatalf("etcd-a is 18 days from expiry: want a new roll, got %+v", r)
	}
	if len(r.Due) != 1 || r.Due[0].Machine != "etcd-a" {
		t.Errorf("due = %v, want etcd-a only", r.Due)
	}
	if strings.Join(r.Machines, ",") != "etcd-a,etcd-b,etcd-c" {
		t.Errorf("machines = %v, want all three, sorted", r.Machines)
	}
	if r.Name != "tmpl-2" {
		t.Errorf("name = %q, want tmpl-2, the template in place with its number incremented", r.Name)
	}

	// Time passing with the same machines keeps the name, although more
	// of them fall into the window; so does a refreshed statement about
	// the same machines (another date, another expiresInDays).
	later, _ := decideRoll("tmpl-1", []evidence{a, b, c}, nil, now.AddDate(0, 0, 10), 30, nil)
	if later.Name != r.Name {
		t.Errorf("name changed with time: %q then %q", r.Name, later.Name)
	}
	if len(later.Due) != 2 || later.Due[0].Machine != "etcd-a" || later.Due[1].Machine != "etcd-b" {
		t.Errorf("later due = %v, want etcd-a then etcd-b", later.Due)
	}
	rescanned := a
	rescanned.Value, rescanned.Expiry = "expiresInDays=17", day(2026, 12, 9)
	if again, _ := decideRoll("tmpl-1", []evidence{rescanned, b, c}, nil, now, 30, nil); again.Name != r.Name {
		t.Errorf("a refreshed statement about the same machines changed the name: %q then %q", r.Name, again.Name)
	}

}

// TestDecideRollAcrossARoll: while the copy in place replaces the machines
// due, no new roll starts; once its replacements are due, the next one
// does, under a free name.
func TestDecideRollAcrossARoll(t *testing.T) {
	a, _, c := etcdEvidence()
	replaced := []string{"etcd-a", "etcd-b", "etcd-c"}
	// Mid-roll: the copy in place replaces a, b and c; b has been replaced
	// by n (not due), a is still due, and c has fallen into the window.
	// The roll is in progress: no new name.
	n := ev("etcd-n", "2027-11-23T00:00:00Z", day(2027, 11, 23))
	mid, ok := decideRoll("tmpl-2", []evidence{a, n, c}, replaced, day(2027, 5, 10), 30, nil)
	if !ok || !mid.InProgress || mid.Name != "" {
		t.Errorf("mid-roll = %+v, want a roll in progress and no new name", mid)
	}
	if len(mid.Due) != 2 {
		t.Errorf("mid-roll due = %v, want etcd-a and etcd-c", mid.Due)
	}

	// Finished: only replacements, none due.
	if _, ok := decideRoll("tmpl-2", []evidence{n}, replaced, day(2027, 1, 1), 30, nil); ok {
		t.Error("a finished roll with nothing due must not roll")
	}

	// A year later the replacements are due: they are not among the
	// machines the copy in place replaces, so a new roll with a new name.
	next, ok := decideRoll("tmpl-2", []evidence{n}, replaced, day(2027, 11, 1), 30, nil)
	if !ok || next.InProgress || next.Name != "tmpl-3" {
		t.Errorf("next roll = %+v, want tmpl-3", next)
	}
	// A name that is taken (a template EKS Anywhere or a user made) is
	// skipped.
	taken := func(name string) bool { return name == "tmpl-3" || name == "tmpl-4" }
	if skip, _ := decideRoll("tmpl-2", []evidence{n}, replaced, day(2027, 11, 1), 30, taken); skip.Name != "tmpl-5" {
		t.Errorf("with tmpl-3 and tmpl-4 taken, name = %q, want tmpl-5", skip.Name)
	}

	// A copy without its list (an empty list) replaces nothing known.
	if legacy, _ := decideRoll("tmpl-2", []evidence{a}, []string{}, now, 30, nil); legacy.InProgress || legacy.Name == "" {
		t.Errorf("a copy with no list must not count as a roll in progress: %+v", legacy)
	}

	expired, _ := decideRoll("tmpl-1", []evidence{ev("etcd-old", "2026-11-01T00:00:00Z", day(2026, 11, 1))}, nil, now, 30, nil)
	if len(expired.Expired) != 1 {
		t.Errorf("expired = %v, want etcd-old", expired.Expired)
	}
}

// eksaName is the pattern EKS Anywhere's controller requires of a machine
// template name it increments (aws/eks-anywhere pkg/clusterapi): anything,
// a dash, digits at the end.
var eksaName = regexp.MustCompile(`(.*?)(-)(\d+)$`)

// eksaIncrement is how EKS Anywhere reads the next name it will write:
// the match's prefix and number (which must parse as an int).
func eksaIncrement(name string) (string, int, bool) {
	m := eksaName.FindStringSubmatch(name)
	if m == nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(m[3])
	return m[1], n, err == nil
}

func TestNextName(t *testing.T) {
	long := strings.Repeat("a", 240) + "." + strings.Repeat("b", 9) + "-9" // 252 characters
	tests := []struct{ name, want string }{
		{"test-etcd-1", "test-etcd-2"},
		{"test-etcd-9", "test-etcd-10"},
		{"md-0", "md-1"},
		{"prod-etcd-template-1700000000000", "prod-etcd-template-1700000000001"},
		{"etcd-007", "etcd-8"}, // EKS Anywhere reads 007 as 7
		{"test-etcd", "test-etcd-1"},
		{"etcd01", "etcd01-1"},                                       // digits, but no "-N" suffix
		{"v1-etcd-template-a2", "v1-etcd-template-a2-1"},             // digits after a letter
		{"etcd-1-2", "etcd-1-3"},                                     // only the last number counts
		{"etcd-", "etcd--1"},                                         // a dash and no digits
		{"etcd-99999999999999999999", "etcd-99999999999999999999-1"}, // beyond int64: EKS Anywhere cannot increment it
		{"etcd-9223372036854775807", "etcd-9223372036854775807-1"},
		{long, strings.Repeat("a", 240) + "." + strings.Repeat("b", 9) + "-10"},
		{strings.Repeat("a", 251) + "-9", strings.Repeat("a", 250) + "-10"},
		{strings.Repeat("a", 249) + ".-99", strings.Repeat("a", 249) + "-100"}, // shortened, trailing "." and "-" trimmed
		{strings.Repeat("a", 253), strings.Repeat("a", 251) + "-1"},
	}
	for _, tt := range tests {
		got := nextName(tt.name)
		if got != tt.want {
			t.Errorf("nextName(%q) = %q, want %q", tt.name, got, tt.want)
		}
		if len(got) > 253 {
			t.Errorf("nextName(%q) is %d characters, more than a Kubernetes name may have", tt.name, len(got))
		}
		// EKS Anywhere must be able to increment what we write: the
		// regex matches and the number parses.
		prefix, n, ok := eksaIncrement(got)
		if !ok {
			t.Errorf("nextName(%q) = %q, which EKS Anywhere cannot increment", tt.name, got)
			continue
		}
		if fmt.Sprintf("%s-%d", prefix, n+1) != nextName(got) {
			t.Errorf("EKS Anywhere would follow %q with %s-%d, rotate-certs with %q", got, prefix, n+1, nextName(got))
		}
	}
	// Where EKS Anywhere can increment the name in place, both agree.
	for _, name := range []string{"test-etcd-1", "md-0", "etcd-007", "etcd-1-2", "prod-etcd-template-1700000000000"} {
		prefix, n, ok := eksaIncrement(name)
		if !ok || fmt.Sprintf("%s-%d", prefix, n+1) != nextName(name) {
			t.Errorf("nextName(%q) = %q, EKS Anywhere: %s-%d", name, nextName(name), prefix, n+1)
		}
	}
	// Names that end in digits without a "-N" suffix are ones EKS Anywhere
	// rejects ("invalid format of name"); the copy's name is one it takes.
	for _, name := range []string{"etcd01", "v1-etcd-template-a2", "test-etcd"} {
		if _, _, ok := eksaIncrement(name); ok {
			t.Errorf("%q should not match EKS Anywhere's pattern", name)
		}
		if _, _, ok := eksaIncrement(nextName(name)); !ok {
			t.Errorf("nextName(%q) = %q does not match EKS Anywhere's pattern", name, nextName(name))
		}
	}
}

func TestMachineList(t *testing.T) {
	if got := formatMachines([]string{"c", "a", "b", "a"}); got != "a,b,c" {
		t.Errorf("FormatMachines = %q, want a,b,c", got)
	}
	if got := parseMachines(" a, b ,,c"); strings.Join(got, "|") != "a|b|c" {
		t.Errorf("ParseMachines = %q", got)
	}
	if got := parseMachines(""); got == nil || len(got) != 0 {
		t.Errorf("parseMachines(\"\") = %#v, want an empty, non-nil list", got)
	}
}

func TestLeftText(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{18*24*time.Hour + time.Hour, "18 days left"},
		{24 * time.Hour, "1 day left"},
		{23 * time.Hour, "less than a day left"},
		{0, "less than a day ago"},
		{-time.Hour, "less than a day ago"},
		{-24 * time.Hour, "1 day ago"},
		{-49 * time.Hour, "2 days ago"},
	}
	for _, tt := range tests {
		if got := leftText(now.Add(tt.d), now); got != tt.want {
			t.Errorf("leftText(now%+v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestCheckEtcdadmExpiryDays(t *testing.T) {
	if err := checkEtcdadmExpiryDays(30); err != nil {
		t.Errorf("30: %v", err)
	}
	err := checkEtcdadmExpiryDays(365)
	if err == nil || !strings.Contains(err.Error(), "365, the validity of the etcd certificates etcdadm issues") || strings.Contains(err.Error(), "certificateValidityPeriodDays is not set") {
		t.Errorf("365: %v, want the etcdadm validity named, not a KubeadmControlPlane field", err)
	}
	if err := checkEtcdadmExpiryDays(6); err == nil || !strings.Contains(err.Error(), "6 is below 7") {
		t.Errorf("6: %v", err)
	}
}
