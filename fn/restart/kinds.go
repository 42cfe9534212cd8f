package restart

import (
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The kinds whose pod templates rotate-certs reads, their template paths,
// whether they roll and what a roll of each risks are one table,
// policy.WorkloadKinds: the restart rules read its rolled and reported
// rows, init lists readers of every row. A kind at an API version the
// table does not name is read by neither.

// workloadOf returns the row of kinds for node when the restart rules read
// it (readWorkload): a rolled or reported kind, at an API version the
// table names.
func workloadOf(kinds policy.WorkloadTable, node *yaml.RNode) (policy.WorkloadKind, bool) {
	k, ok := kinds.At(node.GetApiVersion(), node.GetKind())
	return k, ok && k.Role != policy.RoleListed
}
