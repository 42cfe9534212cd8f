package policy

import (
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// Workload kinds that restart.workloads may name: the kinds whose pod
// template rotate-certs can roll (the rows of workloadRows with RoleRolled).
const (
	kindDeployment  = "Deployment"
	kindStatefulSet = "StatefulSet"
	kindDaemonSet   = "DaemonSet"
	kindArgoRollout = "Rollout" // Argo Rollouts (argoproj.io)
)

// WorkloadRole is what rotate-certs does with a kind whose pods read
// Secrets and ConfigMaps.
type WorkloadRole int

const (
	// RoleRolled kinds are rolled by writing the trust-hash into their pod
	// template; restart.workloads may name them.
	RoleRolled WorkloadRole = iota
	// RoleReported kinds are read by the restart rules and never rolled: a
	// bundle change is an info result (a Job's next pod reads the new
	// bundle by itself).
	RoleReported
	// RoleListed kinds are only listed as readers of a CA by init; the
	// restart rules do not read them.
	RoleListed
)

// WorkloadKind is what rotate-certs knows of one kind whose pods read
// Secrets and ConfigMaps: one row of the workload-kind table. It is data;
// the restart rules, validation and init read it.
type WorkloadKind struct {
	// Kind is the object's kind.
	Kind string
	// APIVersions are the versions whose schema rotate-certs knows; the
	// kind at another version is not read.
	APIVersions []string
	// Template is the path of the pod template; nil for a Pod, which is
	// its own template.
	Template []string
	// Role is what rotate-certs does with it.
	Role WorkloadRole
	// Replicas is true when spec.replicas sets how many pods it runs, so
	// that one pod (or an unset count) is a risk when it rolls.
	Replicas bool
	// Pausable is true when spec.paused holds a roll back.
	Pausable bool
	// OnDelete is true when spec.updateStrategy.type OnDelete leaves its
	// pods unreplaced until they are deleted.
	OnDelete bool
	// WorkloadRef is true when it may borrow the pod template of another
	// workload (spec.workloadRef) and have none of its own.
	WorkloadRef bool
	// ReplacesPods is its roll behaviour: true when a change of its pod
	// template replaces its running pods (its controller rolls them out,
	// unless OnDelete holds them), so that they read their trust again.
	// A Job's or CronJob's running pods keep theirs (the next run reads
	// the new template), a ReplicaSet's or ReplicationController's are
	// not replaced (only new pods get it), and a Pod's spec cannot change:
	// `diff` counts a reader of such a kind that reads its trust once as
	// keeping the old trust, whatever the change does to its template.
	ReplacesPods bool
}

// workloadRows is the one list of the kinds whose pod templates
// rotate-certs reads. The rolled ones come first, in the order messages
// name them. A ReplicaSet is normally owned by a Deployment (the
// Deployment is what rolls), a ReplicationController starts only its new
// pods from a changed template (it never rolls the running ones), and a
// Pod's spec cannot be changed in place: init lists them as readers, the
// restart rules leave them alone.
var workloadRows = []WorkloadKind{
	{Kind: kindDeployment, APIVersions: []string{"apps/v1"}, Template: []string{"spec", "template"}, Role: RoleRolled, Replicas: true, Pausable: true, ReplacesPods: true},
	{Kind: kindStatefulSet, APIVersions: []string{"apps/v1"}, Template: []string{"spec", "template"}, Role: RoleRolled, Replicas: true, OnDelete: true, ReplacesPods: true},
	{Kind: kindDaemonSet, APIVersions: []string{"apps/v1"}, Template: []string{"spec", "template"}, Role: RoleRolled, OnDelete: true, ReplacesPods: true},
	{Kind: kindArgoRollout, APIVersions: []string{"argoproj.io/v1alpha1"}, Template: []string{"spec", "template"}, Role: RoleRolled, Replicas: true, Pausable: true, WorkloadRef: true, ReplacesPods: true},
	{Kind: "Job", APIVersions: []string{"batch/v1"}, Template: []string{"spec", "template"}, Role: RoleReported},
	{Kind: "CronJob", APIVersions: []string{"batch/v1", "batch/v1beta1"}, Template: []string{"spec", "jobTemplate", "spec", "template"}, Role: RoleReported},
	{Kind: "ReplicaSet", APIVersions: []string{"apps/v1"}, Template: []string{"spec", "template"}, Role: RoleListed},
	{Kind: "ReplicationController", APIVersions: []string{"v1"}, Template: []string{"spec", "template"}, Role: RoleListed},
	{Kind: "Pod", APIVersions: []string{"v1"}, Role: RoleListed},
}

// WorkloadTable is the workload-kind table, looked up by kind. Its zero
// value is the table rotate-certs ships (WorkloadKinds).
type WorkloadTable struct {
	table kube.Table[string, WorkloadKind]
}

// NewWorkloadTable returns a table of rows (a kind listed twice keeps its
// first row). Tests add a kind with it.
func NewWorkloadTable(rows ...WorkloadKind) WorkloadTable {
	return WorkloadTable{kube.NewTable(func(k WorkloadKind) string { return k.Kind }, rows...)}
}

// workloadTable is built once from workloadRows and never changed.
var workloadTable = NewWorkloadTable(workloadRows...)

// WorkloadKinds returns the table rotate-certs ships.
func WorkloadKinds() WorkloadTable { return workloadTable }

func (t WorkloadTable) orDefault() kube.Table[string, WorkloadKind] {
	if t.table.IsZero() {
		return workloadTable.table
	}
	return t.table
}

// Rows returns a copy of the table's rows, in order.
func (t WorkloadTable) Rows() []WorkloadKind { return t.orDefault().Rows() }

// Lookup returns the row of kind.
func (t WorkloadTable) Lookup(kind string) (WorkloadKind, bool) { return t.orDefault().Lookup(kind) }

// At returns the row of kind at apiVersion: false when the kind is not in
// the table or rotate-certs does not know that version of it.
func (t WorkloadTable) At(apiVersion, kind string) (WorkloadKind, bool) {
	k, ok := t.Lookup(kind)
	if !ok || !slices.Contains(k.APIVersions, apiVersion) {
		return WorkloadKind{}, false
	}
	return k, true
}

// Rolled returns the kinds with RoleRolled, in table order: the kinds
// restart.workloads may name.
func (t WorkloadTable) Rolled() []string {
	var out []string
	for _, r := range t.Rows() {
		if r.Role == RoleRolled {
			out = append(out, r.Kind)
		}
	}
	return out
}
