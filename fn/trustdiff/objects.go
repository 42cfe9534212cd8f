package trustdiff

import (
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// object reads what the diff needs of an item besides its certificates:
// a workload (its readers, its pod template), a Cluster API object that
// rolls out machines, a PrometheusRule's alerts, a RotationPolicy.
func (b *builder) object(item *yaml.RNode) {
	kind, group := item.GetKind(), kube.GroupOf(item.GetApiVersion())
	workload, isWorkload := b.in.workloads.At(item.GetApiVersion(), kind)
	machines, _ := kube.MachineKinds().Lookup(group, kind)
	switch {
	case kube.IsLocalConfig(item) && !layout.IsPolicy(item):
	case layout.IsPolicy(item):
		b.policy(item)
	case isWorkload:
		b.workload(item, workload)
	case len(machines.RolloutFields()) > 0:
		fields := machines.RolloutFields()
		nodes := make([]*yaml.RNode, len(fields))
		for i, f := range fields {
			nodes[i] = kube.At(item, f...)
		}
		b.model.rollouts = append(b.model.rollouts, rollout{resource: b.resource(kube.RefOf(item)), digest: b.digestOf(item, nodes...)})
	case group == "monitoring.coreos.com" && kind == "PrometheusRule":
		b.alerts(item)
	}
}

// workload records a workload's pod template digest (at the template path
// of kind, its row of policy.WorkloadKinds; its spec when it has none: a
// Pod, a Rollout that borrows another's template). What it reads is the
// readers' (readers.go).
func (b *builder) workload(item *yaml.RNode, kind policy.WorkloadKind) {
	var tmpl *yaml.RNode
	if len(kind.Template) > 0 {
		tmpl = kube.At(item, kind.Template...)
	}
	if tmpl == nil {
		tmpl = kube.At(item, "spec")
	}
	b.model.workloads = append(b.model.workloads, workload{resource: b.resource(kube.RefOf(item)), template: b.digestOf(item, tmpl), replaces: kind.ReplacesPods})
}

// alerts records the alert rules of a PrometheusRule.
func (b *builder) alerts(item *yaml.RNode) {
	res := b.resource(kube.RefOf(item))
	groups := kube.At(item, "spec", "groups")
	if groups == nil {
		return
	}
	gs, _ := groups.Elements()
	for _, g := range gs {
		rules := kube.At(g, "rules")
		if rules == nil {
			continue
		}
		rs, _ := rules.Elements()
		for _, r := range rs {
			if name := kube.ScalarAt(r, "alert"); name != "" {
				b.model.alerts = append(b.model.alerts, alert{resource: res, name: kube.Safe(name)})
			}
		}
	}
}

// policy records what of a RotationPolicy the diff words; a policy that
// does not decode is a problem (render and check fail on it).
func (b *builder) policy(item *yaml.RNode) {
	ref := kube.RefOf(item)
	p, err := b.decode(item)
	if err != nil {
		b.problem(ref, fmt.Sprintf("%s: %v", ref, err))
		return
	}
	out := policySpec{resource: b.resource(ref), bundles: map[string]bundleSpec{}}
	for _, tb := range p.Spec.TrustBundles {
		spec := bundleSpec{mode: tb.Mode, target: kube.Safe(fmt.Sprintf("%s %s", targetKind(tb.Target), tb.Target.Name)), retain: retainWords(tb.Retain)}
		if spec.mode == "" {
			spec.mode = policy.ModeBundle
		}
		if tb.Retain.For != nil {
			spec.retainFor = tb.Retain.For.Duration
		}
		for _, s := range tb.Sources {
			spec.sources = append(spec.sources, sourceWords(s))
		}
		out.bundles[kube.Safe(tb.Name)] = spec
	}
	b.model.policies = append(b.model.policies, out)
}

// targetKind is a target's kind, Secret when unset.
func targetKind(t policy.Target) string {
	if t.Kind == "" {
		return "Secret"
	}
	return string(t.Kind)
}

// retainWords words a retain block.
func retainWords(r policy.Retain) string {
	var ws []string
	if r.MaxPrevious != nil {
		ws = append(ws, fmt.Sprintf("maxPrevious %d", *r.MaxPrevious))
	}
	if r.For != nil {
		ws = append(ws, "for "+r.For.Duration.String())
	}
	if r.ProtectIssuers != nil {
		ws = append(ws, fmt.Sprintf("protectIssuers %t", *r.ProtectIssuers))
	}
	if r.DropUnusedAfter != nil {
		ws = append(ws, "dropUnusedAfter "+r.DropUnusedAfter.Duration.String())
	}
	if len(ws) == 0 {
		return "(defaults)"
	}
	return strings.Join(ws, " ")
}

// sourceWords names a source.
func sourceWords(s policy.Source) string {
	switch {
	case s.Secret != nil:
		return kube.Safe(fmt.Sprintf("Secret %s/%s %s", s.Secret.Namespace, s.Secret.Name, s.Secret.Key))
	case s.ConfigMap != nil:
		return kube.Safe(fmt.Sprintf("ConfigMap %s/%s %s", s.ConfigMap.Namespace, s.ConfigMap.Name, s.ConfigMap.Key))
	default:
		return "inline PEM"
	}
}
