package restart

import (
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
)

// BundleScope is what a policy bundle adds to the readers of one of its
// targets: its restart rules and where its targets are.
type BundleScope struct {
	// Restart is the bundle's restart policy: the workloads its
	// restart.mesh and restart.injected say are injected, and those
	// restart.workloads names, read the bundle.
	Restart policy.Restart
	// Namespaces are the namespaces of the bundle's targets: such a
	// workload reads the target of its own namespace, or every target
	// when the bundle writes none there (readsEveryTarget).
	Namespaces []string
}

// OfBundle returns what reads s, a target of a policy bundle: Of's
// readers, and the workloads of s's package that the bundle's restart
// rules say read it - injected at admission (Injected, as the restart
// rules roll them: a workload whose answer depends on a Namespace the
// tree lacks is not among them), or named in restart.workloads - one
// reader per object, in input order.
func (r *Readers) OfBundle(s Subject, b BundleScope) []Reader {
	out := r.Of(s)
	pkg := r.packageOf(s.Node)
	var extra []Reader
	if b.Restart.InjectsTrust() {
		for _, rd := range r.readers {
			if rd.w == nil || rd.pkg != pkg || !readsTarget(b, s.Key.Namespace, rd.w.ref.Namespace) {
				continue
			}
			if inj, ok := r.injection(rd.w, b.Restart); ok && inj.Injected {
				extra = append(extra, Reader{Ref: rd.ref, Workload: rd.w, order: rd.order,
					Uses: []Use{{Via: ViaInjected, Field: rd.w.templateField + ".metadata", why: inj.Why}}})
			}
		}
	}
	for _, ref := range b.Restart.Workloads {
		rd := r.named(ref, pkg)
		if rd == nil || !readsTarget(b, s.Key.Namespace, ref.Namespace) {
			continue
		}
		extra = append(extra, Reader{Ref: rd.ref, Workload: rd.w, order: rd.order, explicit: true, Uses: usesOf(rd.w, s.Key)})
	}
	return mergeReaders(out, extra)
}

// readsTarget reports whether a workload of namespace ns that reads a
// bundle without naming its target reads the target of namespace target:
// its own namespace's, or every one when the bundle has none there.
func readsTarget(b BundleScope, target, ns string) bool {
	return target == ns || readsEveryTarget(b.Namespaces, ns)
}

// named returns the workload of package pkg that ref names, the first of
// its key, when the restart rules roll it by name: one of a rolled kind
// with a pod template of its own.
func (r *Readers) named(ref policy.WorkloadRef, pkg string) *reader {
	key := kube.Key{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
	for _, rd := range r.readers {
		if rd.w != nil && rd.pkg == pkg && (kube.Key{Kind: rd.ref.Kind, Namespace: rd.ref.Namespace, Name: rd.ref.Name}) == key {
			if !rd.w.rollable || rd.w.workloadRef {
				return nil
			}
			return rd
		}
	}
	return nil
}

// usesOf returns the uses w's template makes of the object key, in w's
// namespace: what else a named workload reads of a target.
func usesOf(w *Workload, key kube.Key) []Use {
	if w.ref.Namespace != key.Namespace {
		return nil
	}
	var out []Use
	for _, u := range w.Model.uses() {
		if u.Object == (Object{kind: key.Kind, name: key.Name}) {
			out = append(out, u)
		}
	}
	return out
}

// injection applies the injection rules of rs (Injected) to workload w;
// ok is false for a workload no rule is asked about: one rotate-certs does
// not roll, or that borrows another's pod template.
func (r *Readers) injection(w *Workload, rs policy.Restart) (inj Injection, ok bool) {
	if !w.rollable || w.workloadRef {
		return Injection{}, false
	}
	return Injected(rs, w.pod, r.namespace(r.packageOf(w.node), w.ref.Namespace)), true
}

// readsEveryTarget reports whether a workload of namespace ns that reads
// a bundle without naming its target (injected, or named in
// restart.workloads) reads every target of it: the bundle, whose targets
// are in namespaces, writes none in ns (targetFor).
func readsEveryTarget(namespaces []string, ns string) bool {
	return !slices.Contains(namespaces, ns)
}
