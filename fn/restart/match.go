package restart

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// matchInjected records the workloads whose pods b's restart.mesh or
// restart.injected says are injected (Readers.injection, the rule
// OfBundle counts them by): they read the bundle as their pods were
// admitted, whatever their template shows. It warns, once per namespace,
// when the answer depends on a Namespace the input lacks.
func (a *applier) matchInjected(b Bundle) {
	missing := map[string][]string{}
	var order []string
	for _, w := range a.workloads {
		inj, ok := a.readers.injection(w, b.Restart)
		if !ok {
			continue
		}
		ns := w.ref.Namespace
		if inj.unknown {
			if _, seen := missing[ns]; !seen {
				order = append(order, ns)
			}
			missing[ns] = append(missing[ns], w.ref.String())
			continue
		}
		if !inj.Injected {
			continue
		}
		t, across := targetFor(b, ns)
		a.add(w, &entry{bundle: b.Name, target: t, across: across,
			uses: []Use{{Via: ViaInjected, Field: w.templateField + ".metadata", why: inj.Why}}})
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

// changed reports whether the render changed the trust of any of b's
// targets.
func (b Bundle) changed() bool {
	return slices.ContainsFunc(b.Targets, func(t Target) bool { return t.Changed })
}
