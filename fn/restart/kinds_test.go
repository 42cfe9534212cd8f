package restart

import (
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// rowOf returns the shipped table's row of kind (the zero row when none).
func rowOf(kind string) policy.WorkloadKind {
	k, _ := policy.WorkloadKinds().Lookup(kind)
	return k
}

// readNode reads n as the restart rules do, with the shipped table's row of
// its kind.
func readNode(n *yaml.RNode) (*Workload, error) {
	return readWorkload(n, rowOf(n.GetKind()))
}

// isWorkload reports whether the restart rules read n.
func isWorkload(n *yaml.RNode) bool {
	_, ok := workloadOf(policy.WorkloadKinds(), n)
	return ok
}

// isReader reports whether n is a reader: a kind of any row of the table.
func isReader(n *yaml.RNode) bool {
	_, ok := policy.WorkloadKinds().At(n.GetApiVersion(), n.GetKind())
	return ok
}

// readTemplateOf reads n's pod template by its kind's row, any role.
func readTemplateOf(n *yaml.RNode) (Template, error) {
	return templateOf(n, rowOf(n.GetKind()))
}

// addedKinds are the shipped table and three kinds added by a row each: one
// whose pod count spec.replicas sets (OpenKruise's CloneSet), one without
// spec.replicas, which runs one pod per node as a DaemonSet does, and a
// made-up batch kind that is reported and never rolled, as a Job is.
func addedKinds() policy.WorkloadTable {
	return policy.NewWorkloadTable(append(policy.WorkloadKinds().Rows(),
		policy.WorkloadKind{Kind: "CloneSet", APIVersions: []string{"apps.kruise.io/v1alpha1"}, Template: []string{"spec", "template"}, Role: policy.RoleRolled, Replicas: true},
		policy.WorkloadKind{Kind: "NodeAgent", APIVersions: []string{"example.com/v1"}, Template: []string{"spec", "pod"}, Role: policy.RoleRolled},
		policy.WorkloadKind{Kind: "BatchRun", APIVersions: []string{"example.com/v1"}, Template: []string{"spec", "template"}, Role: policy.RoleReported},
	)...)
}
