package clusterapi

import (
	"regexp"
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
		err := CheckExpiryDays(tt.days, tt.validity, tt.set)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("CheckExpiryDays(%d, %d, %v) = %v, want nil", tt.days, tt.validity, tt.set, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("CheckExpiryDays(%d, %d, %v) = %v, want %q", tt.days, tt.validity, tt.set, err, tt.wantErr)
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
		if got := Due(tt.expiry, now, days); got != tt.want {
			t.Errorf("Due(%s) = %v, want %v", tt.expiry, got, tt.want)
		}
	}
	if Due(ExpiryIn(29, now), now, 30) != true || Due(ExpiryIn(30, now), now, 30) != false {
		t.Error("expiresInDays 29 must be due in a 30-day window, 30 must not")
	}
}

func TestDaysLeft(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int
	}{
		{18 * 24 * time.Hour, 18},
		{18*24*time.Hour + time.Hour, 18},
		{0, 0},
		{-time.Hour, -1},
		{-24 * time.Hour, -1},
	}
	for _, tt := range tests {
		if got := DaysLeft(now.Add(tt.d), now); got != tt.want {
			t.Errorf("DaysLeft(now%+v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}

func TestParseExpiry(t *testing.T) {
	if got, err := ParseExpiry("2026-12-10T00:00:00+01:00"); err != nil || !got.Equal(time.Date(2026, 12, 9, 23, 0, 0, 0, time.UTC)) {
		t.Errorf("ParseExpiry = %v, %v", got, err)
	}
	for _, bad := range []string{"", "2026-12-10", "next tuesday", "2026-13-01T00:00:00Z"} {
		if _, err := ParseExpiry(bad); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
			t.Errorf("ParseExpiry(%q) = %v, want an RFC 3339 error", bad, err)
		}
	}
}

func ev(machine, value string, expiry time.Time) Evidence {
	return Evidence{Machine: machine, Source: "Machine ns/" + machine + " status.certificatesExpiryDate", Value: value, Expiry: expiry}
}

func TestPlanRoll(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	a := ev("etcd-a", "2026-12-10T00:00:00Z", day(2026, 12, 10))
	b := ev("etcd-b", "2026-12-30T00:00:00Z", day(2026, 12, 30))
	c := ev("etcd-c", "2027-06-01T00:00:00Z", day(2027, 6, 1))

	if _, ok := PlanRoll("tmpl", []Evidence{c}, nil, now, 30); ok {
		t.Error("nothing inside the window must not roll")
	}
	if _, ok := PlanRoll("tmpl", nil, nil, now, 30); ok {
		t.Error("no evidence must not roll")
	}
	r, ok := PlanRoll("tmpl", []Evidence{c, b, a}, nil, now, 30)
	if !ok || r.InProgress {
		t.Fatalf("etcd-a is 18 days from expiry: want a new roll, got %+v", r)
	}
	if len(r.Due) != 1 || r.Due[0].Machine != "etcd-a" {
		t.Errorf("due = %v, want etcd-a only", r.Due)
	}
	if strings.Join(r.Machines, ",") != "etcd-a,etcd-b,etcd-c" {
		t.Errorf("machines = %v, want all three, sorted", r.Machines)
	}
	if r.Name != RollName("tmpl", []string{"etcd-a", "etcd-b", "etcd-c"}) || !strings.HasPrefix(r.Name, "tmpl-renew-") {
		t.Errorf("name = %q, want RollName of the three machines", r.Name)
	}

	// Time passing with the same machines keeps the name, although more
	// of them fall into the window; so does a refreshed statement about
	// the same machines (another date, another expiresInDays).
	later, _ := PlanRoll("tmpl", []Evidence{a, b, c}, nil, now.AddDate(0, 0, 10), 30)
	if later.Name != r.Name {
		t.Errorf("name changed with time: %q then %q", r.Name, later.Name)
	}
	if len(later.Due) != 2 || later.Due[0].Machine != "etcd-a" || later.Due[1].Machine != "etcd-b" {
		t.Errorf("later due = %v, want etcd-a then etcd-b", later.Due)
	}
	rescanned := a
	rescanned.Value, rescanned.Expiry = "expiresInDays=17", day(2026, 12, 9)
	if again, _ := PlanRoll("tmpl", []Evidence{rescanned, b, c}, nil, now, 30); again.Name != r.Name {
		t.Errorf("a refreshed statement about the same machines changed the name: %q then %q", r.Name, again.Name)
	}

	// Mid-roll: the copy in place replaces a, b and c; b has been replaced
	// by n (not due), a is still due, and c has fallen into the window.
	// The roll is in progress: no new name.
	n := ev("etcd-n", "2027-11-23T00:00:00Z", day(2027, 11, 23))
	mid, ok := PlanRoll("tmpl", []Evidence{a, n, c}, r.Machines, day(2027, 5, 10), 30)
	if !ok || !mid.InProgress || mid.Name != "" {
		t.Errorf("mid-roll = %+v, want a roll in progress and no new name", mid)
	}
	if len(mid.Due) != 2 {
		t.Errorf("mid-roll due = %v, want etcd-a and etcd-c", mid.Due)
	}

	// Finished: only replacements, none due.
	if _, ok := PlanRoll("tmpl", []Evidence{n}, r.Machines, day(2027, 1, 1), 30); ok {
		t.Error("a finished roll with nothing due must not roll")
	}

	// A year later the replacements are due: they are not among the
	// machines the copy in place replaces, so a new roll with a new name.
	next, ok := PlanRoll("tmpl", []Evidence{n}, r.Machines, day(2027, 11, 1), 30)
	if !ok || next.InProgress || next.Name == r.Name || !strings.HasPrefix(next.Name, "tmpl-renew-") {
		t.Errorf("next roll = %+v, want a new tmpl-renew- name", next)
	}

	// A copy without its list (an empty list) replaces nothing known.
	if legacy, _ := PlanRoll("tmpl", []Evidence{a}, []string{}, now, 30); legacy.InProgress || legacy.Name == "" {
		t.Errorf("a copy with no list must not count as a roll in progress: %+v", legacy)
	}

	expired, _ := PlanRoll("tmpl", []Evidence{ev("etcd-old", "2026-11-01T00:00:00Z", day(2026, 11, 1))}, nil, now, 30)
	if len(expired.Expired) != 1 {
		t.Errorf("expired = %v, want etcd-old", expired.Expired)
	}
}

func TestRollName(t *testing.T) {
	if RollName("t", []string{"a", "b"}) != RollName("t", []string{"b", "a", "b"}) {
		t.Error("the name must not depend on order or duplicates")
	}
	if RollName("t", []string{"a"}) == RollName("t", []string{"a", "b"}) {
		t.Error("another machine must give another name")
	}
	if RollName("t", []string{"a"}) == RollName("u", []string{"a"}) {
		t.Error("another base must give another name")
	}
	if got := RollName("prod-etcd-template-1763600000000", []string{"prod-etcd-7xk2p"}); !regexp.MustCompile(`^prod-etcd-template-1763600000000-renew-[0-9a-f]{8}$`).MatchString(got) {
		t.Errorf("name = %q, want <base>-renew-<8 hex>", got)
	}
	long := strings.Repeat("a", 47) + "-" + strings.Repeat("b", 20)
	name := RollName(long, []string{"m"})
	if len(name) > 63 || strings.Contains(name, "--") || !strings.HasPrefix(name, strings.Repeat("a", 47)+"-renew-") {
		t.Errorf("long name = %q (%d chars), want <= 63 without a dangling dash", name, len(name))
	}
}

func TestMachineList(t *testing.T) {
	if got := FormatMachines([]string{"c", "a", "b", "a"}); got != "a,b,c" {
		t.Errorf("FormatMachines = %q, want a,b,c", got)
	}
	if got := ParseMachines(" a, b ,,c"); strings.Join(got, "|") != "a|b|c" {
		t.Errorf("ParseMachines = %q", got)
	}
	if got := ParseMachines(""); got == nil || len(got) != 0 {
		t.Errorf("ParseMachines(\"\") = %#v, want an empty, non-nil list", got)
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
		if got := LeftText(now.Add(tt.d), now); got != tt.want {
			t.Errorf("LeftText(now%+v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestCheckEtcdadmExpiryDays(t *testing.T) {
	if err := CheckEtcdadmExpiryDays(30); err != nil {
		t.Errorf("30: %v", err)
	}
	err := CheckEtcdadmExpiryDays(365)
	if err == nil || !strings.Contains(err.Error(), "365, the validity of the etcd certificates etcdadm issues") || strings.Contains(err.Error(), "certificateValidityPeriodDays is not set") {
		t.Errorf("365: %v, want the etcdadm validity named, not a KubeadmControlPlane field", err)
	}
	if err := CheckEtcdadmExpiryDays(6); err == nil || !strings.Contains(err.Error(), "6 is below 7") {
		t.Errorf("6: %v", err)
	}
}
