package clusterapi

import (
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
	a := ev("etcd-a", "2026-12-10T00:00:00Z", time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC))
	b := ev("etcd-b", "2026-12-30T00:00:00Z", time.Date(2026, 12, 30, 0, 0, 0, 0, time.UTC))
	c := ev("etcd-c", "2027-06-01T00:00:00Z", time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC))

	if _, ok := PlanRoll("tmpl", []Evidence{c}, now, 30); ok {
		t.Error("nothing inside the window must not roll")
	}
	if _, ok := PlanRoll("tmpl", nil, now, 30); ok {
		t.Error("no evidence must not roll")
	}
	r, ok := PlanRoll("tmpl", []Evidence{c, b, a}, now, 30)
	if !ok {
		t.Fatal("etcd-a is 18 days from expiry: want a roll")
	}
	if len(r.Due) != 1 || r.Due[0].Machine != "etcd-a" {
		t.Errorf("due = %v, want etcd-a only", r.Due)
	}
	if !strings.HasPrefix(r.Name, "tmpl-renew-") || len(r.Name) != len("tmpl-renew-")+8 {
		t.Errorf("name = %q, want tmpl-renew-<8 hex>", r.Name)
	}

	// Time passing with the same evidence must not change the name,
	// although more machines fall into the window.
	later, _ := PlanRoll("tmpl", []Evidence{a, b, c}, now.Add(10*24*time.Hour), 30)
	if later.Name != r.Name {
		t.Errorf("name changed with time: %q then %q", r.Name, later.Name)
	}
	if len(later.Due) != 2 || later.Due[0].Machine != "etcd-a" || later.Due[1].Machine != "etcd-b" {
		t.Errorf("later due = %v, want etcd-a then etcd-b", later.Due)
	}

	// New evidence (the replacement machines) gives a new name.
	a2 := ev("etcd-x", "2027-12-01T00:00:00Z", time.Date(2027, 12, 1, 0, 0, 0, 0, time.UTC))
	next, ok := PlanRoll("tmpl", []Evidence{a2}, time.Date(2027, 11, 20, 0, 0, 0, 0, time.UTC), 30)
	if !ok || next.Name == r.Name || !strings.HasPrefix(next.Name, "tmpl-renew-") {
		t.Errorf("next roll = %q (ok %v), want a new tmpl-renew- name", next.Name, ok)
	}

	expired, _ := PlanRoll("tmpl", []Evidence{ev("etcd-old", "2026-11-01T00:00:00Z", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))}, now, 30)
	if len(expired.Expired) != 1 {
		t.Errorf("expired = %v, want etcd-old", expired.Expired)
	}
}

func TestRollName(t *testing.T) {
	a := ev("etcd-a", "2026-12-10T00:00:00Z", time.Time{})
	b := ev("etcd-b", "2026-12-30T00:00:00Z", time.Time{})
	if RollName("t", []Evidence{a, b}) != RollName("t", []Evidence{b, a}) {
		t.Error("the name must not depend on evidence order")
	}
	if RollName("t", []Evidence{a}) == RollName("t", []Evidence{a, b}) {
		t.Error("more evidence must give another name")
	}
	if RollName("t", []Evidence{a}) == RollName("u", []Evidence{a}) {
		t.Error("another base must give another name")
	}
	changed := a
	changed.Value = "2026-12-11T00:00:00Z"
	if RollName("t", []Evidence{a}) == RollName("t", []Evidence{changed}) {
		t.Error("another expiry must give another name")
	}
	long := strings.Repeat("a", 47) + "-" + strings.Repeat("b", 20)
	name := RollName(long, []Evidence{a})
	if len(name) > 63 || strings.Contains(name, "--") || !strings.HasPrefix(name, strings.Repeat("a", 47)+"-renew-") {
		t.Errorf("long name = %q (%d chars), want <= 63 without a dangling dash", name, len(name))
	}
}
