//go:build devtools

// Command simulate runs the rotation simulator (make sim): every cadence
// with its safe settings, then unsafe settings (cadence 1 with
// maxPrevious 0 and with Copy mode, cadence 2 with one previous CA for two
// signers, cadence 7 - a mesh - with retain.for 1d, with and without
// protectIssuers; and cadence 8 with waves a week apart, slower than the
// pre-distribution, which must leave consumers behind), and prints one table. It exits 1 when a safe run fails a handshake, when an unsafe
// run does not (the simulator must be able to see an outage), or when a
// render fails.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/internal/sim"
)

func main() {
	days := flag.Int("days", 3*365, "days to simulate")
	seed := flag.Uint64("seed", 1, "seed of certificates and lags")
	flag.Parse()

	var runs []sim.Stats
	ok := true
	run := func(c sim.Cadence, settings *sim.Settings, wantFailures bool) {
		st, err := sim.Run(sim.Config{Cadence: c, Days: *days, Seed: *seed, Settings: settings})
		if err != nil {
			fmt.Fprintf(os.Stderr, "cadence %d: %v\n", c.ID, err)
			os.Exit(1)
		}
		runs = append(runs, st)
		switch {
		case !wantFailures && st.Failures > 0:
			ok = false
			fmt.Fprintf(os.Stderr, "cadence %d (%s): %d handshake failures, e.g.:\n", c.ID, st.Settings, st.Failures)
			for _, e := range st.Examples {
				fmt.Fprintln(os.Stderr, "  "+e)
			}
		case wantFailures && st.Failures == 0:
			ok = false
			fmt.Fprintf(os.Stderr, "cadence %d (%s): unsafe settings caused no failure; the simulator cannot see outages\n", c.ID, st.Settings)
		}
	}
	for _, c := range sim.Cadences() {
		run(c, nil, false)
	}
	c1, _ := sim.CadenceByID(1)
	run(c1, &sim.Settings{Mode: policy.ModeBundle, MaxPrevious: 0}, true)
	run(c1, &sim.Settings{Mode: policy.ModeCopy}, true)
	c2, _ := sim.CadenceByID(2)
	run(c2, &sim.Settings{Mode: policy.ModeBundle, MaxPrevious: 1}, true)
	c7, _ := sim.CadenceByID(7)
	run(c7, &sim.Settings{Mode: policy.ModeBundle, MaxPrevious: 1, RetainForDays: 1, NoProtectIssuers: true}, true)
	run(c7, &sim.Settings{Mode: policy.ModeBundle, MaxPrevious: 1, RetainForDays: 1}, true)
	// Waves slower than the pre-distribution: the last waves' consumers
	// meet leaves of a CA they do not hold yet (unpropagated, not a
	// regression of trust).
	c8, _ := sim.CadenceByID(8)
	run(c8, &sim.Settings{Mode: policy.ModeBundle, MaxPrevious: 1, WaveIntervalDays: 7}, false)
	if st := runs[len(runs)-1]; st.Unpropagated == 0 {
		ok = false
		fmt.Fprintf(os.Stderr, "cadence 8 (%s): waves slower than the pre-distribution left no consumer behind; the simulator cannot see it\n", st.Settings)
	}

	fmt.Printf("rotation simulation: %d days from %s, seed %d, 3 consumers per bundle (cadence 8: 200 in waves), pick-up lag 0-3 days\n\n",
		*days, sim.Start.Format("2006-01-02"), *seed)
	fmt.Print(sim.Table(runs))
	for _, st := range runs[len(sim.Cadences()):] {
		if len(st.Examples) > 0 {
			fmt.Printf("\nfirst failure, cadence %d with %s: %s\n", st.Cadence.ID, st.Settings, st.Examples[0])
		}
	}
	if !fleets(*seed) {
		ok = false
	}
	if !ok {
		os.Exit(1)
	}
}

// fleets runs a fleet of clusters that call each other and share an
// anchor, rendered at the repository's top, with and without a trust
// domain, and prints their table. It reports false when the run with the
// domain fails a handshake or the one without it does not (the control:
// the simulator must see the outage a domain prevents).
func fleets(seed uint64) bool {
	ok := true
	var runs []sim.FleetStats
	for _, domain := range []bool{true, false} {
		st, err := sim.RunFleet(sim.FleetConfig{Clusters: 6, Days: 180, Period: 60, MaxReissueLag: 14, Seed: seed, Domain: domain})
		if err != nil {
			fmt.Fprintf(os.Stderr, "fleet: %v\n", err)
			os.Exit(1)
		}
		runs = append(runs, st)
		switch {
		case domain && st.Failures > 0:
			ok = false
			fmt.Fprintf(os.Stderr, "fleet with a trust domain: %d handshake failures, e.g. %s\n", st.Failures, st.Examples[0])
		case !domain && st.Failures == 0:
			ok = false
			fmt.Fprintln(os.Stderr, "fleet without a trust domain: no failure; the simulator cannot see the outage")
		}
	}
	fmt.Printf("\nfleet: clusters of one mesh calling each other (every ordered pair, daily, with a proxy certificate of\n")
	fmt.Printf("today's and yesterday's issuer), one package each, rendered at the repository's top; a new anchor every\n")
	fmt.Printf("60 days, each cluster's issuer re-issued from it on a day of its own; retain {maxPrevious: 1, dropUnusedAfter: 24h}\n\n")
	fmt.Print(sim.FleetTable(runs))
	for _, st := range runs {
		if !st.Config.Domain && len(st.Examples) > 0 {
			fmt.Printf("\nfirst failure without a domain: %s\n", st.Examples[0])
		}
	}
	return ok
}
