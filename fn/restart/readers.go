package restart

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The readers a template does not name by the target's own object: pods
// projecting a ClusterTrustBundle, workloads reading what a trust-manager
// Bundle writes, and workloads whose trust is injected at admission.

// sortedObjects returns the keys of byObject in a fixed order.
func sortedObjects(byObject map[Object][]Use) []Object {
	out := slices.AppendSeq(make([]Object, 0, len(byObject)), maps.Keys(byObject))
	slices.SortFunc(out, func(a, b Object) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// matchClusterTrustBundle records the workloads whose projected volumes
// read the ClusterTrustBundle t: by its name, or by its signer name with a
// labelSelector that selects its labels (an unset labelSelector selects
// nothing, as the API says).
func (a *applier) matchClusterTrustBundle(b Bundle, t Target) {
	for _, c := range a.byName[Object{Kind: KindClusterTrustBundle, Name: t.Key.Name}] {
		a.add(c.workload, &entry{bundle: b.Name, target: t, uses: c.uses})
	}
	if t.Node == nil {
		return
	}
	signer := kube.ScalarAt(t.Node, "spec", "signerName")
	if signer == "" {
		return
	}
	objLabels := t.Node.GetLabels()
	for _, c := range a.byName[Object{Kind: KindSigner, Name: signer}] {
		var uses []Use
		for _, u := range c.uses {
			if u.Selector != nil && u.Selector.Matches(objLabels) {
				uses = append(uses, u)
			}
		}
		if len(uses) > 0 {
			a.add(c.workload, &entry{bundle: b.Name, target: t, uses: uses,
				reads: fmt.Sprintf("%s (by signer name %s)", t.Key, kube.Safe(signer))})
		}
	}
}

// matchTrustManager records the workloads that read what the
// trust-manager Bundle t writes. They read it through the object, so the
// reload class applies as to any Secret or ConfigMap.
func (a *applier) matchTrustManager(b Bundle, t Target) {
	if t.Node == nil {
		return
	}
	tt, ok := certmanager.ReadBundleTarget(t.Node)
	if !ok {
		return
	}
	for _, kind := range tt.Kinds() {
		for _, c := range a.byName[Object{Kind: kind, Name: t.Key.Name}] {
			ns := c.workload.Ref.Namespace
			if tt.Selector != nil && !a.selects(tt, ns) {
				continue
			}
			a.add(c.workload, &entry{bundle: b.Name, target: t, uses: c.uses,
				reads: fmt.Sprintf("%s written by trust-manager Bundle %s", kube.Key{Kind: kind, Namespace: ns, Name: t.Key.Name}, t.Key.Name)})
		}
	}
}

// selects reports whether the namespaceSelector of t selects namespace
// ns, whose labels include the name label the API server sets (namespace
// reads them so). A namespace the input lacks is selected only when its
// name alone decides.
func (a *applier) selects(t certmanager.BundleTarget, ns string) bool {
	if n := a.namespace(ns); n != nil {
		return t.Selects(n.Labels)
	}
	return t.Selector.Only(kube.NamespaceNameLabel) && t.Selects(kube.NamespaceLabels(ns, nil))
}

// namespace returns the Namespace object named ns in the input, nil when
// it is absent. Its labels are those a namespaceSelector sees: the
// manifest's and the name label the API server sets (kube.NamespaceLabels).
func (a *applier) namespace(ns string) *Namespace {
	if a.namespaces == nil {
		a.namespaces = map[string]*Namespace{}
		for _, it := range a.env.Items {
			if it.GetKind() != "Namespace" || it.GetApiVersion() != "v1" || kube.IsLocalConfig(it) {
				continue
			}
			if _, dup := a.namespaces[it.GetName()]; !dup {
				a.namespaces[it.GetName()] = &Namespace{Labels: kube.NamespaceLabels(it.GetName(), it.GetLabels()), Annotations: it.GetAnnotations()}
			}
		}
	}
	return a.namespaces[ns]
}

// matchInjected records the workloads whose pods b's restart.mesh or
// restart.injected says are injected: they read the bundle as their pods
// were admitted, whatever their template shows. It warns, once per
// namespace, when the answer depends on a Namespace the input lacks.
func (a *applier) matchInjected(b Bundle) {
	missing := map[string][]string{}
	var order []string
	for _, w := range a.workloads {
		inj, ok := a.injected(w, b.Restart)
		if !ok {
			continue
		}
		ns := w.Ref.Namespace
		if inj.Unknown {
			if _, seen := missing[ns]; !seen {
				order = append(order, ns)
			}
			missing[ns] = append(missing[ns], w.Ref.String())
			continue
		}
		if !inj.Injected {
			continue
		}
		t, across := targetFor(b, ns)
		a.add(w, &entry{bundle: b.Name, target: t, across: across,
			uses: []Use{{Via: ViaInjected, Field: w.TemplateField + ".metadata", Why: inj.Why}}})
	}
	if !b.changed() {
		return
	}
	for _, ns := range order {
		ws := missing[ns]
		more := ""
		if len(ws) > 3 {
			more = fmt.Sprintf(" and %d more", len(ws)-3)
			ws = ws[:3]
		}
		a.results = append(a.results, a.env.PolicyRef.Result(framework.Warning, b.Field+".restart",
			fmt.Sprintf("bundle %q: the Namespace %s is not in the input, so rotate-certs cannot tell whether the pods of %s%s are injected (restart.mesh, restart.injected); they are not rolled - add the Namespace manifest to the input, or name them in restart.workloads",
				b.Name, kube.Safe(ns), strings.Join(ws, ", "), more)))
	}
}

// injected applies r's injection rules (Injected) to workload w; ok is
// false for a workload no rule is asked about: one rotate-certs does not
// roll, or that borrows another's pod template.
func (a *applier) injected(w *Workload, r policy.Restart) (inj Injection, ok bool) {
	if !w.Rollable || w.WorkloadRef {
		return Injection{}, false
	}
	return Injected(r, w.Pod, a.namespace(w.Ref.Namespace)), true
}

// InjectedReader is a workload whose pods receive a bundle's trust at
// admission.
type InjectedReader struct {
	Ref kube.Ref
	// Why names the rule that injects it.
	Why string
	// Never is true for a workload annotated rotate-certs.dev/reload:
	// never, which nothing rolls.
	Never bool
}

// InjectedReaders returns the workloads of items whose pods the restart
// policy r (restart.mesh, restart.injected, restart.exclude) says are
// injected: those Run rolls as readers of the bundle, by the same rule, in
// input order. Those whose answer depends on a Namespace items lack are
// not among them (Run warns of them and does not roll them).
func InjectedReaders(items []*yaml.RNode, r policy.Restart) []InjectedReader {
	if !r.InjectsTrust() {
		return nil
	}
	a := &applier{env: Env{Items: items}, byKey: map[kube.Key]*Workload{}, failed: map[kube.Key]bool{},
		consumers: map[kube.Key][]consumer{}, byName: map[Object][]consumer{}}
	a.scan()
	var out []InjectedReader
	for _, w := range a.workloads {
		if inj, ok := a.injected(w, r); ok && inj.Injected {
			out = append(out, InjectedReader{Ref: w.Ref, Why: inj.Why, Never: w.Reload == ReloadNever})
		}
	}
	return out
}

// ReadsEveryTarget reports whether a workload of namespace ns that reads
// a bundle without naming its target (injected, or named in
// restart.workloads) reads every target of it: the bundle, whose targets
// are in namespaces, writes none in ns (targetFor).
func ReadsEveryTarget(namespaces []string, ns string) bool {
	return !slices.Contains(namespaces, ns)
}

// changed reports whether the render changed the trust of any of b's
// targets.
func (b Bundle) changed() bool {
	return slices.ContainsFunc(b.Targets, func(t Target) bool { return t.Changed })
}
