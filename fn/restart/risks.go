package restart

import (
	"fmt"
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
)

// shape is what decides how a roll of a workload goes.
type shape struct {
	// kind is the workload's row of policy.WorkloadKinds: which of the
	// fields below its kind has.
	kind policy.WorkloadKind
	// replicas is spec.replicas; nil when unset (the API server defaults
	// it to 1) or not a number.
	replicas *int64
	// replicasSet is true when spec.replicas is present at all.
	replicasSet bool
	// paused is spec.paused (read for every kind; a risk where
	// Kind.Pausable).
	paused bool
	// updateStrategy is spec.updateStrategy.type (a risk where
	// Kind.OnDelete).
	updateStrategy string
	// podLabels are spec.template.metadata.labels.
	podLabels map[string]string
}

// risk is a reason a roll may hurt or not happen.
type risk struct {
	// Field is the workload field that causes it.
	Field string
	// Message says what happens and what to do.
	Message string
}

// risks lists what can go wrong when w is rolled. pdbs are the selectors
// of the PodDisruptionBudgets in w's namespace (a PDB that selects nothing
// is left out by the caller).
func risks(w shape, pdbs []kube.Selector) []risk {
	var out []risk
	// A single pod: spec.replicas 1, or unset (the API server defaults it
	// to 1), for a kind whose pod count spec.replicas sets.
	singleReplica := !w.replicasSet || w.replicas != nil && *w.replicas == 1
	if w.kind.Replicas && singleReplica &&
		!slices.ContainsFunc(pdbs, func(s kube.Selector) bool { return s.Matches(w.podLabels) }) {
		what := "spec.replicas is unset"
		if w.replicasSet {
			what = "spec.replicas is 1"
		}
		out = append(out, risk{Field: "spec.replicas", Message: fmt.Sprintf(
			"rolled with a single pod (%s) and no PodDisruptionBudget in its namespace selects its pods: the roll may leave it without a ready pod; run 2 or more replicas or add a PodDisruptionBudget", what)})
	}
	if w.paused && w.kind.Pausable {
		out = append(out, risk{Field: "spec.paused", Message: "rolled while paused: the roll waits until spec.paused is false, and until then its pods keep the old trust"})
	}
	if w.updateStrategy == "OnDelete" && w.kind.OnDelete {
		out = append(out, risk{Field: "spec.updateStrategy.type", Message: "rolled with updateStrategy OnDelete: no pod is replaced until it is deleted; delete its pods (one at a time) to pick up the new trust"})
	}
	return out
}
