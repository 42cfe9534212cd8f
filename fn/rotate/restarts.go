package rotate

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/restart"
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
			rb.Targets = append(rb.Targets, restart.Target{Key: t.Key, Hash: t.Hash, Changed: t.TrustChanged})
		}
		bundles = append(bundles, rb)
	}
	r.results = append(r.results, restart.Apply(bundles, restart.Env{Items: r.items, PolicyRef: r.policyRef})...)
}
