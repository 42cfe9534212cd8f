package initpolicy

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/restart"
)

// findConsumers maps each Secret and ConfigMap (by key) to the workloads
// whose pod template reads it in the workload's namespace, as the restart
// rules read pod templates (restart.ReadTemplate): volumes (secret,
// configMap, projected), env valueFrom and envFrom. It reads every kind
// of kinds (policy.WorkloadKinds), at the API versions the table names:
// besides the kinds the restart rules read, ReplicaSets,
// ReplicationControllers and Pods (policy.RoleListed) read the CA too, and
// the user should point them at the target. A workload whose pod template
// cannot be read is not listed; the notes say which and why, as a render's
// error result would.
func findConsumers(items []*yaml.RNode, kinds policy.WorkloadTable) (map[kube.Key][]Consumer, []string) {
	out := map[kube.Key][]Consumer{}
	var notes []string
	for _, it := range items {
		kind, ok := kinds.At(it.GetApiVersion(), it.GetKind())
		if !ok || kube.IsLocalConfig(it) {
			continue
		}
		ref := kube.RefOf(it)
		tmpl, err := restart.ReadTemplate(it, kind)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s is not listed as a reader of any CA: %v", ref, err))
			continue
		}
		ns := it.GetNamespace()
		refs := map[kube.Key][]string{}
		var order []kube.Key
		add := func(r restart.Ref, how string) {
			k := kube.Key{Kind: r.Kind, Namespace: ns, Name: r.Name}
			if _, seen := refs[k]; !seen {
				order = append(order, k)
			}
			refs[k] = append(refs[k], how)
		}
		for _, vol := range tmpl.Volumes {
			for _, src := range vol.Sources {
				if src.Projected {
					add(src, "projected volume "+kube.Safe(vol.Name))
				} else {
					add(src, "volume "+kube.Safe(vol.Name))
				}
			}
		}
		for _, c := range tmpl.Containers {
			for _, r := range c.Env {
				add(r, "env "+kube.Safe(r.Var))
			}
			for _, r := range c.EnvFrom {
				add(r, "envFrom")
			}
		}
		for _, k := range order {
			out[k] = append(out[k], Consumer{Ref: ref, How: dedupe(refs[k])})
		}
	}
	return out, notes
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
