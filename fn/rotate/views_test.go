package rotate

import (
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A view is one reader of a run's input that a test holds to the
// declarations it reads through: a step, or one of the run's shared
// indexes, which several steps ask and which are built once, over what
// their package declares.
type view struct {
	name  string
	reads []reader
	run   func(*run)
}

// views are the steps in order, then the shared indexes.
func views() []view {
	var out []view
	for _, s := range steps {
		out = append(out, view{name: s.name, reads: s.reads, run: s.run})
	}
	return append(out,
		view{name: "certificate inventory", reads: []reader{readsInventory}, run: func(r *run) { r.scan() }},
		view{name: "workload count", reads: []reader{readsRestarts}, run: func(r *run) { r.workloadCount() }},
	)
}

// ReadViews returns the names of the steps and of the run's shared
// indexes, which Hiding holds to their declarations.
func ReadViews() []string {
	var out []string
	for _, v := range views() {
		out = append(out, v.name)
	}
	return out
}

// Hiding returns p whose runs hide from each view named in names (every
// one when names is empty) the input items its declarations decline - of
// those, only the ones that only accepts, when only is not nil. A hidden
// item is not among the items the view's step sees, nor in its index; the
// items a step creates are seen by every later step. The shared indexes
// are built before the first step, each over its own view.
func Hiding(p Processor, names []string, only func(*yaml.RNode) bool) Processor {
	return hiding(p, names, func(plan *kube.ReadPlan, it *yaml.RNode) bool {
		return !(plan.Kind(it.GetApiVersion(), it.GetKind()) && plan.Item(it)) && (only == nil || only(it))
	})
}

// HidingKind returns p whose runs hide from the view name every input item
// of kind gk, whether its declarations read it or not.
func HidingKind(p Processor, name string, gk kube.GroupKind) Processor {
	return hiding(p, []string{name}, func(_ *kube.ReadPlan, it *yaml.RNode) bool {
		return kube.GroupKindOf(it) == gk
	})
}

// hiding returns p whose runs hide from each view named (every one when
// names is empty) the input items hide accepts, given the view's plan.
func hiding(p Processor, names []string, hide func(*kube.ReadPlan, *yaml.RNode) bool) Processor {
	var h *hider
	p.around = func(r *run, s step) {
		if h == nil || h.r != r {
			h = newHider(r, names, hide)
		}
		h.within(s.name, s.run)
	}
	return p
}

// Declared is one package's declaration as the steps read through it.
type Declared struct {
	// Package is the package that declares.
	Package string
	// Kinds are the kinds its declaration names, read whole or in part.
	Kinds []kube.GroupKind
	// Views are the views (steps, shared indexes) that read through it.
	Views []string
}

// Declarations returns every package's declaration, in the steps' order.
func Declarations() []Declared {
	var out []Declared
	at := map[reader]int{}
	for _, v := range views() {
		for _, rd := range v.reads {
			i, ok := at[rd]
			if !ok {
				i = len(out)
				at[rd] = i
				out = append(out, Declared{Package: rd.String(), Kinds: namedKinds(rd.declare(nil))})
			}
			out[i].Views = append(out[i].Views, v.name)
		}
	}
	return out
}

// String names the package that declares.
func (rd reader) String() string {
	return map[reader]string{readsTrustBundles: "trustbundle", readsRenewals: "certmanager", readsRestarts: "restart",
		readsClusterAPI: "clusterapi", readsInventory: "inventory", readsAlerts: "alerts"}[rd]
}

// namedKinds returns the kinds r names, read whole or in part.
func namedKinds(r kube.Reads) []kube.GroupKind {
	out := append([]kube.GroupKind(nil), r.Kinds...)
	for _, rule := range r.Some {
		out = append(out, rule.GroupKind)
	}
	return out
}

// hider is the state of Hiding for one run.
type hider struct {
	r      *run
	hidden map[string]map[*yaml.RNode]bool // by view name
}

// newHider finds what each view named hides of r's input, then builds the
// shared indexes.
func newHider(r *run, names []string, hide func(*kube.ReadPlan, *yaml.RNode) bool) *hider {
	h := &hider{r: r, hidden: map[string]map[*yaml.RNode]bool{}}
	named := map[string]bool{}
	for _, n := range names {
		named[n] = true
	}
	for _, v := range views() {
		if len(names) > 0 && !named[v.name] {
			continue
		}
		plan := declared(v.reads, r.policy)
		h.hidden[v.name] = map[*yaml.RNode]bool{}
		for _, it := range r.items {
			if hide(plan, it) {
				h.hidden[v.name][it] = true
			}
		}
	}
	for _, v := range views()[len(steps):] {
		h.within(v.name, v.run)
	}
	return h
}

// declared is the union of the declarations reads under pol.
func declared(reads []reader, pol *policy.RotationPolicy) *kube.ReadPlan {
	var all []kube.Reads
	for _, rd := range reads {
		all = append(all, rd.declare(pol.Spec.TrustBundles))
	}
	return kube.Union(all...)
}

// within runs fn over the run's items less those hidden from the view
// name, and keeps what it creates.
func (h *hider) within(name string, fn func(*run)) {
	hidden, r := h.hidden[name], h.r
	if len(hidden) == 0 {
		fn(r)
		return
	}
	items, positions, index := r.items, r.positions, r.index
	var seen []*yaml.RNode
	var at []int
	for i, it := range items {
		if !hidden[it] {
			seen = append(seen, it)
			at = append(at, i)
			if i < len(positions) {
				at[len(at)-1] = positions[i] // an input item; created ones have none
			}
		}
	}
	r.items, r.positions, r.index = seen, at, kube.NewIndex(seen)
	fn(r)
	added := r.items[len(seen):]
	r.items, r.positions, r.index = append(items, added...), positions, index
	for _, n := range added {
		index.Add(n)
	}
}
