package clusterapi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// simMachine is an etcd machine of the simulated etcd cluster.
type simMachine struct {
	name   string
	expiry time.Time
	// from is the infrastructure template it was cloned from.
	from string
}

// rollSim drives the etcd roll day by day against a model of
// etcdadm-controller: the package (EtcdadmCluster and templates) is
// rendered every day with a fresh dump of the machines and written back, as
// `kpt fn render` or `rotate-certs render` and a commit do; the controller
// replaces, every replaceEvery days, one machine not cloned from the
// current template - the machines that are not due first, the worst order
// for a name derived from the due machines.
type rollSim struct {
	t       *testing.T
	pkg     string // the package: EtcdadmCluster and templates
	dump    func(now time.Time, machines []simMachine) string
	base    string
	current string
	next    int
	machine []simMachine
	// changes are the days the template changed, with the template.
	changes []string
}

func newRollSim(t *testing.T, start time.Time, expiries []time.Duration, dump func(time.Time, []simMachine) string) *rollSim {
	s := &rollSim{t: t, pkg: docs(etcdadmCluster, etcdTemplate), dump: dump, base: "prod-etcd-template-1700000000000"}
	s.current = s.base
	for _, d := range expiries {
		s.machine = append(s.machine, simMachine{name: s.newName(), expiry: start.Add(d), from: s.base})
	}
	return s
}

func (s *rollSim) newName() string {
	s.next++
	return fmt.Sprintf("prod-etcd-m%04d", s.next)
}

// render renders the package at now with the current dump, writes the
// result back, and checks that a second render changes nothing.
func (s *rollSim) render(now time.Time) {
	t := s.t
	t.Helper()
	dump := s.dump(now, s.machine)
	items := parse(t, s.pkg+"---\n"+dump)
	added, results := Apply(items, cfg(30), now)
	if errs := errorsOf(results); len(errs) > 0 {
		t.Fatalf("%s: %v", now, errs)
	}
	var pkg []*yaml.RNode
	for _, it := range items {
		if it.GetKind() != kindMachine && it.GetKind() != kindCluster {
			pkg = append(pkg, it)
		}
	}
	s.pkg = render(t, append(pkg, added...))

	again := parse(t, s.pkg+"---\n"+dump)
	added2, _ := Apply(again, cfg(30), now)
	var pkg2 []*yaml.RNode
	for _, it := range again {
		if it.GetKind() != kindMachine && it.GetKind() != kindCluster {
			pkg2 = append(pkg2, it)
		}
	}
	if len(added2) != 0 || render(t, pkg2) != s.pkg {
		t.Fatalf("%s: a second render with the same dump changed the package", now.Format(time.RFC3339))
	}
}

// templateName reads spec.infrastructureTemplate.name from the package.
func (s *rollSim) templateName() string {
	for _, it := range parse(s.t, s.pkg) {
		if it.GetKind() == "EtcdadmCluster" {
			name, err := kube.StringAt(it, append(infrastructureTemplate, "name"))
			if err != nil {
				s.t.Fatal(err)
			}
			return name
		}
	}
	s.t.Fatal("no EtcdadmCluster in the package")
	return ""
}

// day renders at now and lets the controller act.
func (s *rollSim) day(now time.Time, day, replaceEvery int) {
	t := s.t
	for _, m := range s.machine {
		if !now.Before(m.expiry) {
			t.Fatalf("day %d: machine %s expired on %s: the roll came too late", day, m.name, m.expiry.Format(time.RFC3339))
		}
	}
	s.render(now)
	if name := s.templateName(); name != s.current {
		// A template change starts a roll. It must not start while the
		// last one is still running: every machine must come from the
		// template in place.
		for _, m := range s.machine {
			if m.from != s.current {
				t.Fatalf("day %d: template %s -> %s while machine %s (from %s) had not been replaced yet: a second roll started mid-roll",
					day, s.current, name, m.name, m.from)
			}
		}
		s.changes = append(s.changes, fmt.Sprintf("day %d: %s", day, name))
		s.current = name
	}
	if day%replaceEvery != 0 {
		return
	}
	// The controller replaces one machine not cloned from the current
	// template; the one expiring last first.
	pick := -1
	for i, m := range s.machine {
		if m.from != s.current && (pick < 0 || m.expiry.After(s.machine[pick].expiry)) {
			pick = i
		}
	}
	if pick >= 0 {
		s.machine[pick] = simMachine{name: s.newName(), expiry: now.Add(365*24*time.Hour + time.Duration(s.next)*time.Minute), from: s.current}
	}
}

// machineDump is a dump of Machines with the expiry annotation.
func machineDump(_ time.Time, machines []simMachine) string {
	var parts []string
	for _, m := range machines {
		parts = append(parts, etcdMachine(m.name, m.expiry.Format(time.RFC3339)))
	}
	return docs(parts...)
}

// eksaDump is the EKS Anywhere Cluster's status as a scan lag(now) before
// now wrote it: expiresInDays counts whole days from the scan, so the
// statement about one machine changes every day.
func eksaDump(lag func(time.Time) time.Duration) func(time.Time, []simMachine) string {
	return func(now time.Time, machines []simMachine) string {
		scan := now.Add(-lag(now))
		var b strings.Builder
		b.WriteString("apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata:\n  name: prod\n  namespace: default\nstatus:\n  clusterCertificateInfo:\n")
		for _, m := range machines {
			fmt.Fprintf(&b, "  - machine: %s\n    expiresInDays: %d\n", m.name, int(m.expiry.Sub(scan)/(24*time.Hour)))
		}
		return b.String()
	}
}

func TestEtcdRollDayByDay(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Machines created at different times: when the first is due, the
	// others are not, and they fall into the window while the roll runs.
	staggered := []time.Duration{40 * 24 * time.Hour, 45*24*time.Hour + 7*time.Hour, 52 * 24 * time.Hour}
	tests := []struct {
		name         string
		dump         func(time.Time, []simMachine) string
		replaceEvery int
	}{
		{"machine annotations, fast controller", machineDump, 1},
		{"machine annotations, slow controller", machineDump, 4},
		{"EKS Anywhere expiresInDays, fresh scans", eksaDump(func(time.Time) time.Duration { return 0 }), 3},
		{"EKS Anywhere expiresInDays, scans 0-3 days old", eksaDump(func(now time.Time) time.Duration {
			return time.Duration(now.YearDay()%4) * 24 * time.Hour
		}), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newRollSim(t, start, staggered, tt.dump)
			const days = 3*365 + 60
			for d := 0; d < days; d++ {
				// Render at a different hour every day, as a wall
				// clock would.
				now := start.AddDate(0, 0, d).Add(time.Duration(d%24) * time.Hour)
				s.day(now, d, tt.replaceEvery)
			}
			// Four rolls in a little over three years (the first for
			// the initial machines, then one a year), each one template
			// change.
			if len(s.changes) != 4 {
				t.Fatalf("want 4 template changes, one per roll, got %d:\n%s", len(s.changes), strings.Join(s.changes, "\n"))
			}
			// Each roll takes the next number, the naming EKS Anywhere's
			// controller follows.
			for i, c := range s.changes {
				name := c[strings.Index(c, ": ")+2:]
				if want := fmt.Sprintf("prod-etcd-template-170000000000%d", i+1); name != want {
					t.Errorf("template change %q: want %s", c, want)
				}
			}
			t.Logf("%s", strings.Join(s.changes, "; "))
		})
	}
}
