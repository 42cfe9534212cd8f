package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// PendingWaves is a roll-out of restarts in waves (restart.waves) that the
// input records as not done: the waves still to roll, and until when the
// bundle keeps its previous CAs.
type PendingWaves struct {
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

// sortWaves orders roll-outs by package and bundle.
func sortWaves(ws []PendingWaves) {
	sort.SliceStable(ws, func(i, j int) bool {
		if ws[i].Package != ws[j].Package {
			return ws[i].Package < ws[j].Package
		}
		return ws[i].Bundle < ws[j].Bundle
	})
}

// maxWorkloadsNamed caps the workloads the narrow table names per wave.
const maxWorkloadsNamed = 2

func wavesTable(r Report, pkg bool, opts TableOptions) *table {
	t := newTable(pkg, opts,
		[]column{{"BUNDLE", 0, 0}, {"WAVE", 0, 0}, {"DUE (UTC)", 0, 0}, {"STATE", 0, 0}, {"PREVIOUS CAS HELD UNTIL (UTC)", 0, 0}, {"WORKLOADS", 0, 0}},
		[]column{{"BUNDLE", 'm', 8}, {"WAVE", 0, 0}, {"DUE", 0, 0}, {"STATE", 0, 0}, {"CAS HELD UNTIL", 0, 0}, {"WORKLOADS", 'e', 20}})
	for _, w := range r.Waves {
		for _, p := range w.Pending {
			state := "pending"
			if !p.Due.After(r.Now) {
				state = "due: render"
			}
			names := make([]string, len(p.Workloads))
			for i, ref := range p.Workloads {
				names[i] = ref.String()
			}
			if !opts.Wide && len(names) > maxWorkloadsNamed {
				names = append(names[:maxWorkloadsNamed], fmt.Sprintf("%d more", len(p.Workloads)-maxWorkloadsNamed))
			}
			workloads := fmt.Sprintf("%d: %s", len(p.Workloads), strings.Join(names, ", "))
			layout := time.DateOnly
			if opts.Wide {
				layout = tableTime
			}
			cells := []string{cell(w.Bundle), fmt.Sprintf("%d/%d", p.Number, w.Waves), p.Due.Format(layout), state,
				w.HeldUntil.Format(layout), cell(workloads)}
			t.addRow(pkg, w.Package, cells, "")
		}
	}
	return t
}

type jsonWaves struct {
	Package         string        `json:"package"`
	Bundle          string        `json:"bundle"`
	Started         string        `json:"started"`
	Waves           int           `json:"waves"`
	Rolled          int           `json:"rolled"`
	IntervalSeconds int64         `json:"intervalSeconds"`
	HeldUntil       string        `json:"previousCAsHeldUntil"`
	Pending         []jsonPending `json:"pending"`
}

type jsonPending struct {
	Wave      int            `json:"wave"`
	Due       string         `json:"due"`
	Workloads []jsonResource `json:"workloads"`
}

func wavesJSON(ws []PendingWaves) []jsonWaves {
	out := []jsonWaves{}
	for _, w := range ws {
		jw := jsonWaves{Package: w.Package, Bundle: w.Bundle, Started: stamp(w.Started), Waves: w.Waves, Rolled: w.Rolled,
			IntervalSeconds: int64(w.Interval / time.Second), HeldUntil: stamp(w.HeldUntil), Pending: []jsonPending{}}
		for _, p := range w.Pending {
			jp := jsonPending{Wave: p.Number, Due: stamp(p.Due), Workloads: []jsonResource{}}
			for _, ref := range p.Workloads {
				jp.Workloads = append(jp.Workloads, resource(ref))
			}
			jw.Pending = append(jw.Pending, jp)
		}
		out = append(out, jw)
	}
	return out
}
