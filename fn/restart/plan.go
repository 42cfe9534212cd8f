package restart

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// roller is a workload that rolls for a bundle, in the order of its waves.
type roller struct {
	w *Workload
	e *entry
}

// rollers returns the workloads that roll when b changes: those whose
// reads (or an explicit entry, or injection) make them roll and that may
// be rolled, ordered for the waves - the named ones (restart.workloads)
// first, then by namespace and a hash of kind and name.
func (a *applier) rollers(b Bundle) []roller {
	var out []roller
	for _, w := range a.workloads {
		if !w.rollable || w.reload == reloadNever {
			continue
		}
		for _, e := range a.entries[w] {
			if e.bundle == b.Name && decide(e.uses, w.reload, e.explicit).Roll {
				out = append(out, roller{w, e})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].e.explicit != out[j].e.explicit {
			return out[i].e.explicit
		}
		return orderKey(out[i].w.ref) < orderKey(out[j].w.ref)
	})
	return out
}

// planWaves spreads b's roll over waves when its policy asks for them
// (restart.waves): a trust change that rolls more workloads than one wave
// starts a series - the first wave rolls now, wave j once j intervals have
// passed - and a series the targets record goes on. It marks each
// roller's entry deferred (its wave is not due) or due (its wave became
// due at this render), writes the record on every target and says what
// rolls when.
func (a *applier) planWaves(b Bundle) {
	w := b.Restart.Waves
	prior, recorded := a.readSeries(b)
	if w == nil {
		if recorded {
			a.writeSeries(b, nil)
			a.results = append(a.results, a.env.PolicyRef.Result(framework.Info, b.Field+".restart",
				fmt.Sprintf("bundle %q: restart.waves is not set: the roll-out in waves its targets record is over, and every workload rolls with the bundle", b.Name)))
		}
		return
	}
	now, interval := a.env.Now, w.IntervalOrDefault()
	rollers := a.rollers(b)
	var s series
	before := 0
	switch {
	case b.changed():
		waves := w.Size.MaxWaves(len(rollers))
		if waves < 2 {
			a.writeSeries(b, nil)
			return
		}
		s = series{Started: now, Rolled: 1, Waves: waves, At: now}
	case recorded:
		s, before = prior, prior.Rolled
		if due := s.dueCount(now, interval); due > s.Rolled {
			s.Rolled, s.At = due, now
		}
	default:
		a.writeSeries(b, nil) // a record that was ignored is not carried on
		return
	}
	n := len(rollers)
	pending := map[int][]kube.Ref{}
	for p, r := range rollers {
		wave := 0
		if !r.e.explicit {
			wave = p * s.Waves / n
		}
		r.e.wave, r.e.waves, r.e.dueAt = wave, s.Waves, s.due(wave, interval)
		r.e.deferred = wave >= s.Rolled
		r.e.due = !r.e.deferred && wave >= before
		if recorded && !b.changed() && wave >= prior.Rolled {
			pending[wave] = append(pending[wave], r.w.ref)
		}
	}
	if recorded && !b.changed() {
		a.waves = append(a.waves, status(b.Name, interval, prior, pending))
	}
	if s.Rolled == s.Waves && !s.holding(now, interval) {
		a.writeSeries(b, nil)
		a.results = append(a.results, a.env.PolicyRef.Result(framework.Info, b.Field+".restart.waves",
			fmt.Sprintf("bundle %q: the roll-out in %d waves that started %s is over: every wave rolled at least an interval ago; its record is removed from the targets, and the previous CAs follow the retain rules again",
				b.Name, s.Waves, s.Started.Format(time.RFC3339))))
		return
	}
	a.writeSeries(b, &s)
	a.results = append(a.results, a.env.PolicyRef.Result(framework.Info, b.Field+".restart.waves", describeSeries(b.Name, s, before, rollers, interval)))
}

// status is a recorded series as the expiry report lists it: the waves
// the record says have not rolled, with the workloads each one rolls.
func status(bundle string, interval time.Duration, s series, pending map[int][]kube.Ref) PendingWaves {
	st := PendingWaves{Bundle: bundle, Started: s.Started, Waves: s.Waves, Rolled: s.Rolled, Interval: interval,
		HeldUntil: s.holdsUntil(interval)}
	for j := s.Rolled; j < s.Waves; j++ {
		st.Pending = append(st.Pending, PendingWave{Number: j + 1, Due: s.due(j, interval), Workloads: pending[j]})
	}
	return st
}

// describeSeries says what a render did with a series and what comes
// next.
func describeSeries(bundle string, s series, before int, rollers []roller, interval time.Duration) string {
	now := 0
	for _, r := range rollers {
		if r.e.due {
			now++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "bundle %q: the trust change of %s rolls %d workload(s) in %d waves, one every %s; ", bundle, s.Started.Format(time.RFC3339), len(rollers), s.Waves, policy.FormatDuration(interval))
	switch {
	case s.Rolled == before:
		fmt.Fprintf(&b, "%d of %d waves have rolled, none is due at this render", s.Rolled, s.Waves)
	case s.Rolled-before == 1:
		fmt.Fprintf(&b, "wave %d rolls at this render (%d workload(s))", s.Rolled, now)
	default:
		fmt.Fprintf(&b, "waves %d to %d roll at this render (%d workload(s))", before+1, s.Rolled, now)
	}
	if s.Rolled < s.Waves {
		fmt.Fprintf(&b, "; wave %d is due %s", s.Rolled+1, s.due(s.Rolled, interval).Format(time.RFC3339))
		if s.Rolled+1 < s.Waves {
			fmt.Fprintf(&b, ", the last %s", s.due(s.Waves-1, interval).Format(time.RFC3339))
		}
	}
	fmt.Fprintf(&b, "; the bundle keeps its previous CAs until %s at least (one interval after the last wave)", s.holdsUntil(interval).Format(time.RFC3339))
	return b.String()
}

// readSeries returns the series b's targets record. A record that cannot
// be read, or that claims more than the policy allows, is a warning naming
// it and is ignored; records that disagree are a warning, and the latest
// started (the least rolled of those) counts.
func (a *applier) readSeries(b Bundle) (series, bool) {
	lim := recordLimits{now: a.env.Now, maxWaves: math.MaxInt} // waves are off: any record ends
	if w := b.Restart.Waves; w != nil {
		lim.maxWaves = mostWaves(*w, CountWorkloads(a.env.Items))
	}
	var best series
	found, disagree := false, false
	for _, node := range targetNodes(b) {
		text, ok := node.GetAnnotations(wavesAnnotation)[wavesAnnotation]
		if !ok {
			continue
		}
		s, has, err := parseRecord(text, b.Name, lim)
		ref := kube.RefOf(node)
		if err != nil {
			a.results = append(a.results, ref.Result(framework.Warning, kube.AnnotationField(wavesAnnotation),
				fmt.Sprintf("bundle %q: annotation %s of %s %v; the record is ignored - a roll-out record a render could not have written delays no roll and holds no CA", b.Name, wavesAnnotation, ref, err)))
			continue
		}
		if !has {
			continue
		}
		switch {
		case !found:
			best, found = s, true
		case s != best:
			disagree = true
			if s.Started.After(best.Started) || (s.Started.Equal(best.Started) && s.Rolled < best.Rolled) {
				best = s
			}
		}
	}
	if disagree {
		a.results = append(a.results, a.env.PolicyRef.Result(framework.Warning, b.Field+".restart.waves",
			fmt.Sprintf("bundle %q: its targets record different roll-outs in annotation %s; the latest (%s) counts, and every target gets it", b.Name, wavesAnnotation, best.line(b.Name))))
	}
	return best, found
}

// writeSeries sets b's line of the waves record on every target object
// (removes it when s is nil).
func (a *applier) writeSeries(b Bundle, s *series) {
	for _, node := range targetNodes(b) {
		cur, has := node.GetAnnotations(wavesAnnotation)[wavesAnnotation]
		text := formatRecord(cur, b.Name, s)
		var err error
		switch {
		case text == "" && has:
			err = node.PipeE(yaml.ClearAnnotation(wavesAnnotation))
		case text != "":
			_, err = kube.SetAnnotation(node, wavesAnnotation, text)
		}
		if err != nil {
			a.results = append(a.results, kube.RefOf(node).Result(framework.Error, kube.AnnotationField(wavesAnnotation), err.Error()))
		}
	}
}

// targetNodes returns b's target objects, each once.
func targetNodes(b Bundle) []*yaml.RNode {
	var out []*yaml.RNode
	seen := map[*yaml.RNode]bool{}
	for _, t := range b.Targets {
		if t.Node != nil && !seen[t.Node] {
			seen[t.Node] = true
			out = append(out, t.Node)
		}
	}
	return out
}
