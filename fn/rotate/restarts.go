package rotate

import (
	"fmt"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// restarts rolls the workloads whose trust changed (docs/design/contract.md,
// Restart rules). It
// runs after trustBundles and reads what each bundle rendered.
func (r *run) restarts() {
	var bundles []restart.Bundle
	for i, b := range r.policy.Spec.TrustBundles {
		rendered, ok := r.bundles[b.Name]
		if !ok {
			continue
		}
		rb := restart.Bundle{Name: b.Name, Field: fmt.Sprintf("spec.trustBundles[%d]", i), Restart: b.Restart}
		for _, t := range rendered.Targets {
			rb.Targets = append(rb.Targets, restart.Target{Key: t.Key, Hash: t.Hash, Changed: t.TrustChanged, Created: t.Created, Node: t.Node})
		}
		bundles = append(bundles, rb)
	}
	out := restart.Run(bundles, restart.Env{Items: r.items, PolicyRef: r.policyRef, Now: r.now})
	r.results = append(r.results, out.Results...)
	r.waves = out.Waves
}

// previousHeldUntil is the trust bundles' hook into the restart rules: a target
// whose bundle rolls out in waves that are not done keeps its previous CAs
// (restart.PreviousHeldUntil reads the record the restart rules wrote on it).
func (r *run) previousHeldUntil(b *policy.TrustBundle, node *yaml.RNode) (time.Time, bool) {
	if b.Restart.Waves == nil {
		return time.Time{}, false
	}
	return restart.PreviousHeldUntil(b, node, r.now, r.workloadCount())
}

// workloadCount counts the input's workloads that the restart rules can
// roll (restart.CountWorkloads), once per run.
func (r *run) workloadCount() int {
	if r.workloads < 0 {
		r.workloads = restart.CountWorkloads(r.items)
	}
	return r.workloads
}
