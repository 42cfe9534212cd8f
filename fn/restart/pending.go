package restart

import (
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// PendingWaves is a roll-out of restarts in waves (restart.waves) that the
// input records as not done: the waves still to roll, and until when the
// bundle keeps its previous CAs.
type PendingWaves struct {
	// Package is the package of the policy: Run leaves it empty, and the
	// report of several packages (check) sets it.
	Package string
	Bundle  string
	// Started is the render that changed the trust.
	Started time.Time
	// Waves and Rolled count the waves, and those that have rolled.
	Waves, Rolled int
	Interval      time.Duration
	// HeldUntil is when the bundle's previous CAs may go, at the earliest.
	HeldUntil time.Time
	Pending   []PendingWave
}

// PendingWave is one wave still to roll.
type PendingWave struct {
	// Number counts from 1.
	Number int
	// Due is when it rolls: the first render at or after it.
	Due time.Time
	// Workloads are what it rolls.
	Workloads []kube.Ref
}
