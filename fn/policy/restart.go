package policy

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// Workload kinds that restart.workloads may name: the kinds whose pod
// template rotate-certs can roll.
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindDaemonSet   = "DaemonSet"
	KindRollout     = "Rollout"
)

// WorkloadKinds lists the kinds rotate-certs rolls, in the order messages
// name them.
var WorkloadKinds = []string{KindDeployment, KindStatefulSet, KindDaemonSet, KindRollout}

// Restart controls which workloads roll when a bundle's trust changes
// (docs/design/contract.md, Restart rules).
type Restart struct {
	// Auto rolls every input workload whose pod template consumes the
	// bundle's target (default true).
	Auto *bool `json:"auto,omitempty"`
	// Workloads are rolled too, even when not detected as consumers.
	Workloads []WorkloadRef `json:"workloads,omitempty"`
}

// WorkloadRef names one workload.
type WorkloadRef struct {
	// Kind is one of WorkloadKinds.
	Kind string `json:"kind"`
	// Name of the workload.
	Name string `json:"name"`
	// Namespace of the workload; empty matches a workload written without
	// a namespace.
	Namespace string `json:"namespace,omitempty"`
}

// String returns "Kind namespace/name".
func (w WorkloadRef) String() string {
	if w.Namespace == "" {
		return w.Kind + " " + w.Name
	}
	return w.Kind + " " + w.Namespace + "/" + w.Name
}

// AutoEnabled reports whether consumer detection is on (true when unset).
func (r Restart) AutoEnabled() bool { return r.Auto == nil || *r.Auto }

// Default sets Auto to true when unset.
func (r *Restart) Default() {
	if r.Auto == nil {
		yes := true
		r.Auto = &yes
	}
}

func (r Restart) validate(path string) FieldErrors {
	var errs FieldErrors
	seen := map[WorkloadRef]int{}
	for i, w := range r.Workloads {
		wp := fmt.Sprintf("%s.workloads[%d]", path, i)
		if !isWorkloadKind(w.Kind) {
			errs.add(wp+".kind", "%s is not one of %s, %s, %s, %s (the kinds with a pod template rotate-certs can roll; Jobs and CronJobs read the new bundle on their next run)",
				kube.Quote(w.Kind), WorkloadKinds[0], WorkloadKinds[1], WorkloadKinds[2], WorkloadKinds[3])
		}
		ok := errs.checkObjectName(wp+".name", "workload", w.Name)
		ok = errs.checkNamespace(wp+".namespace", w.Namespace) && ok
		if j, dup := seen[w]; dup && ok && isWorkloadKind(w.Kind) {
			errs.add(wp, "duplicate of %s.workloads[%d] (%s)", path, j, w)
		}
		seen[w] = i
	}
	return errs
}

func isWorkloadKind(kind string) bool {
	for _, k := range WorkloadKinds {
		if k == kind {
			return true
		}
	}
	return false
}
