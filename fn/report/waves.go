package report

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/restart"
)

// sortWaves orders roll-outs by package and bundle.
func sortWaves(ws []restart.PendingWaves) {
	slices.SortStableFunc(ws, func(a, b restart.PendingWaves) int {
		return cmp.Or(cmp.Compare(a.Package, b.Package), cmp.Compare(a.Bundle, b.Bundle))
	})
}

// wavesTable has a row per workload still to roll, so that where a
// workload stands can be found with grep: its wave, when the wave is due,
// and until when its bundle keeps the previous CAs.
func wavesTable(r Report, pkg bool, opts TableOptions) *table {
	t := newTable(pkg, opts,
		[]string{"BUNDLE", "WAVE", "DUE (UTC)", "STATE", "PREVIOUS CAS HELD UNTIL (UTC)", "WORKLOAD"},
		[]string{"BUNDLE", "WAVE", "DUE", "STATE", "CAS HELD UNTIL", "WORKLOAD"})
	layout := opts.layout()
	for _, w := range r.Waves {
		for _, p := range w.Pending {
			state := "pending"
			if !p.Due.After(r.now) {
				state = "due: render"
			}
			for _, ref := range p.Workloads {
				cells := []string{cell(w.Bundle), fmt.Sprintf("%d/%d", p.Number, w.Waves), p.Due.Format(layout), state,
					w.HeldUntil.Format(layout), cell(ref.String())}
				t.addRow(pkg, w.Package, cells, "")
			}
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

func wavesJSON(ws []restart.PendingWaves) []jsonWaves {
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
