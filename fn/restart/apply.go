package restart

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Bundle is a rendered trust bundle, as far as restarts care.
type Bundle struct {
	// Name is the bundle's name.
	Name string
	// Field is the bundle's field path in the policy, such as
	// "spec.trustBundles[0]".
	Field string
	// Targets are the bundle's target objects, one per namespace.
	Targets []Target
	// Restart is the bundle's restart policy (defaulted).
	Restart policy.Restart
}

// Target is one rendered target object of a bundle.
type Target struct {
	// Key identifies the object.
	Key kube.Key
	// Hash is the object's bundle hash ("sha256:...").
	Hash string
	// Changed is true when this render created the object or changed the
	// set of CAs it holds.
	Changed bool
	// Created is true when this render created the object.
	Created bool
	// Node is the object: a ClusterTrustBundle's signer and labels and a
	// trust-manager Bundle's target say who reads it, and the object
	// carries the memory of a roll-out in waves. Nil in tests that need
	// neither.
	Node *yaml.RNode
}

// Env is what Apply needs from the run.
type Env struct {
	// Items are the input resources, in order; workloads among them are
	// edited in place.
	Items []*yaml.RNode
	// PolicyRef is the policy, for results about its fields.
	PolicyRef kube.Ref
	// Now is the render time, which the waves of a roll-out are due by.
	Now time.Time
	// Kinds is the workload-kind table; the zero value is the one
	// rotate-certs ships (policy.WorkloadKinds). Tests add a kind here.
	Kinds policy.WorkloadTable
}

// Outcome is what Run did.
type Outcome struct {
	// Results are the results of the restart rules.
	Results framework.Results
	// Waves are the roll-outs in waves that the input records as not
	// done, per bundle.
	Waves []PendingWaves
}

// entry is one bundle a workload must answer for.
type entry struct {
	bundle   string
	target   Target
	uses     []Use
	explicit bool
	// across is true when the workload is named explicitly, or injected,
	// and the bundle has no target in its namespace: it then stands for
	// every target (targetFor).
	across bool
	// reads describes the object read when it is not the target itself
	// (what a trust-manager Bundle writes); empty otherwise.
	reads string
	// deferred is true when the bundle rolls out in waves and the
	// workload's wave is not due; due is true when its wave became due at
	// this render (see waves.go).
	deferred, due bool
	// wave and waves place a deferred workload, for results.
	wave, waves int
	dueAt       time.Time
}

type applier struct {
	env Env
	// readers answer who reads each target (readers.go); workloads are
	// those the restart rules read (rolled and reported kinds, the first
	// of each key), byKey by their key.
	readers   *Readers
	workloads []*Workload
	byKey     map[kube.Key]*Workload
	own       map[*Workload]bool
	failed    map[kube.Key]bool
	entries   map[*Workload][]*entry
	pdbs      map[string][]kube.Selector
	results   framework.Results
	waves     []PendingWaves
}

// Run rolls every workload whose trust changed, as the restart rules of
// docs/design/contract.md say: it asks Readers who reads each bundle's
// targets (one pass over the input, indexed by the objects they read) and
// which workloads are injected at admission, decides per workload
// and bundle whether the read forces a roll, spreads the rolls of a bundle
// with restart.waves over time, and writes the trust-hash of the rolling
// bundles into the pod template when it differs. Its results are an info
// per consumer of a bundle that changed (rolled, or why not), warnings for
// rolls that may hurt or stall, and errors for workloads it cannot read.
func Run(bundles []Bundle, env Env) Outcome {
	if len(bundles) == 0 {
		return Outcome{}
	}
	a := &applier{
		env:     env,
		byKey:   map[kube.Key]*Workload{},
		own:     map[*Workload]bool{},
		failed:  map[kube.Key]bool{},
		entries: map[*Workload][]*entry{},
	}
	a.scan()
	for _, b := range bundles {
		a.match(b)
	}
	for _, b := range bundles {
		a.planWaves(b)
	}
	for _, w := range a.workloads {
		if es := a.entries[w]; len(es) > 0 {
			a.roll(w, es)
		}
	}
	return Outcome{Results: a.results, Waves: a.waves}
}

// scan reads the input once (Readers): every workload of a kind the
// restart rules roll or report, an error result for each whose reads or
// reload class it cannot tell (it is not rolled), the first of each key.
func (a *applier) scan() {
	a.readers = NewReaders(a.env.Items, ReadersOptions{Kinds: a.env.Kinds})
	failed := map[*yaml.RNode]bool{}
	for _, e := range a.readers.Errors() {
		if e.Role == policy.RoleListed {
			continue
		}
		failed[e.Node] = true
		a.failed[kube.KeyOf(e.Node)] = true
		field, msg := kube.SplitFieldError(e.Err, "")
		a.results = append(a.results, kube.RefOf(e.Node).Result(framework.Error, field, msg))
	}
	for _, w := range a.readers.workloads() {
		key := kube.KeyOf(w.node)
		if _, dup := a.byKey[key]; dup || failed[w.node] || w.role == policy.RoleListed {
			continue
		}
		a.byKey[key] = w
		a.own[w] = true
		a.workloads = append(a.workloads, w)
	}
}

// match records, for bundle b, every workload that must answer for it.
func (a *applier) match(b Bundle) {
	if len(b.Targets) == 0 {
		return
	}
	if b.Restart.AutoEnabled() {
		for _, t := range b.Targets {
			for _, rd := range a.readers.Of(Subject{Key: t.Key, Node: t.Node}) {
				if a.own[rd.Workload] {
					a.add(rd.Workload, &entry{bundle: b.Name, target: t, uses: rd.Uses, reads: rd.reads})
				}
			}
		}
	}
	if b.Restart.InjectsTrust() {
		a.matchInjected(b)
	}
	for j, ref := range b.Restart.Workloads {
		field := fmt.Sprintf("%s.restart.workloads[%d]", b.Field, j)
		key := kube.Key{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
		w := a.byKey[key]
		switch {
		case a.failed[key]:
			continue
		case w == nil:
			a.results = append(a.results, a.env.PolicyRef.Result(framework.Info, field,
				fmt.Sprintf("bundle %q: %s is not in the input; nothing to roll", b.Name, ref)))
			continue
		case w.workloadRef:
			a.results = append(a.results, a.env.PolicyRef.Result(framework.Warning, field,
				fmt.Sprintf("bundle %q: %s has no pod template of its own (spec.workloadRef); name the workload it references instead", b.Name, ref)))
			continue
		}
		t, across := targetFor(b, ref.Namespace)
		a.add(w, &entry{bundle: b.Name, target: t, uses: usesOf(w, t.Key), explicit: true, across: across})
	}
}

// add records e for w, merging it into the entry w already has for the
// bundle: the uses of both count, and an explicit entry stays explicit.
func (a *applier) add(w *Workload, e *entry) {
	for _, have := range a.entries[w] {
		if have.bundle == e.bundle {
			have.explicit = have.explicit || e.explicit
			for _, u := range e.uses {
				if !slices.ContainsFunc(have.uses, func(h Use) bool { return h.Via == u.Via && h.Field == u.Field }) {
					have.uses = append(have.uses, u)
				}
			}
			return
		}
	}
	a.entries[w] = append(a.entries[w], e)
}

// targetFor returns the target of b in namespace ns. When b has none there
// (an explicit or injected workload elsewhere), it returns one target
// standing for all of them. What such a workload reads is one of the sets
// of CAs the targets hold, so its hash covers the distinct sets - the one
// set's own hash when every target holds the same - and not which
// namespaces hold a copy; it changed when a target's set changed, or a
// created target holds a set no target that existed holds (a copy of the
// same CAs in a new namespace changes nothing it reads).
func targetFor(b Bundle, ns string) (Target, bool) {
	namespaces := make([]string, len(b.Targets))
	for i, t := range b.Targets {
		namespaces[i] = t.Key.Namespace
	}
	if !readsEveryTarget(namespaces, ns) {
		return b.Targets[slices.Index(namespaces, ns)], false
	}
	if len(b.Targets) == 1 {
		return b.Targets[0], true
	}
	all := Target{Key: kube.Key{Kind: b.Targets[0].Key.Kind, Name: b.Targets[0].Key.Name}}
	existing := map[string]bool{}
	for _, t := range b.Targets {
		if !t.Created {
			existing[t.Hash] = true
			all.Changed = all.Changed || t.Changed
		}
	}
	var sets []string
	for _, t := range b.Targets {
		all.Changed = all.Changed || (t.Created && !existing[t.Hash])
		sets = append(sets, t.Hash)
	}
	slices.Sort(sets)
	sets = slices.Compact(sets)
	if len(sets) == 1 {
		all.Hash = sets[0]
		return all, true
	}
	sum := sha256.Sum256([]byte(strings.Join(sets, "\n") + "\n"))
	all.Hash = "sha256:" + hex.EncodeToString(sum[:])
	return all, true
}

// roll decides for one workload over every bundle it answers for, and
// writes its trust-hash when that changed. Its results appear in a render
// where a bundle it reads changed (or where it is rolled): a render that
// changes nothing stays quiet about the workloads it leaves alone.
func (a *applier) roll(w *Workload, entries []*entry) {
	sort.Slice(entries, func(i, j int) bool { return entries[i].bundle < entries[j].bundle })
	anyChanged := slices.ContainsFunc(entries, func(e *entry) bool { return e.target.Changed })
	if !w.rollable {
		a.reportOnly(w, entries)
		return
	}
	annotationField := w.templateField + ".metadata.annotations." + TrustHashAnnotation
	if w.reload == reloadNever {
		a.reportNever(w, entries, anyChanged)
		return
	}
	decisions := make([]decision, len(entries))
	var hashes []bundleHash
	changed, deferred := false, false
	var waiting *entry
	for i, e := range entries {
		decisions[i] = decide(e.uses, w.reload, e.explicit)
		if !decisions[i].Roll {
			continue
		}
		hashes = append(hashes, bundleHash{Bundle: e.bundle, Hash: e.target.Hash})
		if e.deferred {
			deferred = true
			if waiting == nil {
				waiting = e
			}
			continue
		}
		changed = changed || e.target.Changed || e.due
	}
	if len(hashes) == 0 {
		if anyChanged {
			a.info(w, decisions[0].Because.Field, "not rolled: "+describeAll(entries, decisions))
		}
		return
	}
	hash := trustHash(hashes)
	cur, has := w.trustHash()
	switch {
	case deferred && !changed:
		// Its wave is not due: the trust-hash it has is what its pods
		// started with, and stays until the wave rolls it.
		if anyChanged {
			a.info(w, annotationField, fmt.Sprintf("not rolled yet: bundle %q rolls out in waves, and this workload is in wave %d of %d, due %s: %s",
				waiting.bundle, waiting.wave+1, waiting.waves, waiting.dueAt.Format(time.RFC3339), describeAll(entries, decisions)))
		}
		return
	case (has && cur == hash) || (!has && !changed):
		// The trust it reads is what its pods started with.
		if anyChanged {
			a.info(w, annotationField, "not rolled, the trust it must restart for is unchanged: "+describeAll(entries, decisions))
		}
		return
	}
	if _, err := w.setTrustHash(hash); err != nil {
		a.result(w, framework.Error, annotationField, err.Error())
		return
	}
	msg := "rolled, its trust changed: " + describeAll(entries, decisions)
	if deferred {
		msg += fmt.Sprintf(" (bundle %q, which rolls out in waves, rolls with it ahead of its wave %d of %d)", waiting.bundle, waiting.wave+1, waiting.waves)
	}
	a.info(w, annotationField, msg)
	for _, r := range risks(w.shape, a.pdbsIn(w.ref.Namespace)) {
		a.result(w, framework.Warning, r.Field, r.Message)
	}
}

// reportOnly says, for a workload of a kind the restart rules report and
// never roll (policy.RoleReported: a Job, a CronJob) reading a bundle that
// changed, that it is never rolled.
func (a *applier) reportOnly(w *Workload, entries []*entry) {
	for _, e := range entries {
		if !e.target.Changed || len(e.uses) == 0 || e.uses[0].Via == ViaInjected {
			continue
		}
		u := e.uses[0]
		a.info(w, u.Field, fmt.Sprintf("bundle %q (%s) changed and is read through %s at %s; a %s is never rolled, each new pod reads the current bundle",
			e.bundle, describeTarget(e), u.Via, u.Field, w.ref.Kind))
	}
}

// reportNever says that a workload annotated reload: never is not rolled:
// a warning when the policy names it, an info when a bundle it reads
// changed.
func (a *applier) reportNever(w *Workload, entries []*entry, anyChanged bool) {
	msg := fmt.Sprintf("not rolled for %s: the workload is annotated %s: never", describeAll(entries, nil), reloadAnnotation)
	switch {
	case slices.ContainsFunc(entries, func(e *entry) bool { return e.explicit }):
		a.result(w, framework.Warning, "metadata.annotations."+reloadAnnotation, msg+", which wins over restart.workloads")
	case anyChanged:
		a.info(w, "metadata.annotations."+reloadAnnotation, msg)
	}
}

func (a *applier) info(w *Workload, field, msg string) { a.result(w, framework.Info, field, msg) }

func (a *applier) result(w *Workload, sev framework.Severity, field, msg string) {
	a.results = append(a.results, w.ref.Result(sev, field, msg))
}

// describeAll says, per bundle, which target the workload reads and, when
// decisions is not nil, what decided.
func describeAll(entries []*entry, decisions []decision) string {
	parts := make([]string, len(entries))
	for i, e := range entries {
		s := fmt.Sprintf("bundle %q (%s)", e.bundle, describeTarget(e))
		if decisions != nil {
			s += " " + decisions[i].Reason
		}
		parts[i] = s
	}
	return strings.Join(parts, "; ")
}

func describeTarget(e *entry) string {
	if e.reads != "" {
		return e.reads
	}
	if e.across && e.target.Key.Namespace == "" {
		return fmt.Sprintf("every %s %s of the bundle", e.target.Key.Kind, e.target.Key.Name)
	}
	return e.target.Key.String()
}

// pdbsIn returns the selectors of the PodDisruptionBudgets in namespace
// ns, indexing them all on first use.
func (a *applier) pdbsIn(ns string) []kube.Selector {
	if a.pdbs == nil {
		a.pdbs = map[string][]kube.Selector{}
		for _, item := range a.env.Items {
			if item.GetKind() != kindPDB || kube.GroupOf(item.GetApiVersion()) != groupPDB || kube.IsLocalConfig(item) {
				continue
			}
			if s, ok := pdbSelector(item); ok {
				a.pdbs[item.GetNamespace()] = append(a.pdbs[item.GetNamespace()], s)
			}
		}
	}
	return a.pdbs[ns]
}

// pdbSelector returns the pod selector of a PodDisruptionBudget; ok is
// false when it selects no pod (no selector, an invalid one, or an empty
// one in policy/v1beta1, where empty selects nothing; in policy/v1 empty
// selects every pod of the namespace).
func pdbSelector(pdb *yaml.RNode) (kube.Selector, bool) {
	apiVersion := pdb.GetApiVersion()
	if apiVersion != "policy/v1" && apiVersion != "policy/v1beta1" {
		return kube.Selector{}, false
	}
	node := kube.At(pdb, "spec", "selector")
	if node == nil {
		return kube.Selector{}, false
	}
	s, err := kube.SelectorOf(node)
	if err != nil {
		return s, false
	}
	if s.Empty() && apiVersion == "policy/v1beta1" {
		return s, false
	}
	return s, true
}
