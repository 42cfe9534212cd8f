package policy

import (
	"fmt"
	"slices"
	"strings"

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
	// Mesh applies a service mesh's own injection rules (MeshLinkerd,
	// MeshIstio): the workloads the mesh injects read the bundle through
	// what its injector copies into each pod at admission.
	Mesh string `json:"mesh,omitempty"`
	// Injected selects workloads whose trust something injects at
	// admission, which their pod template does not show (injected.go);
	// a workload any selection matches is a consumer.
	Injected []Selection `json:"injected,omitempty"`
	// Exclude selects workloads that are never injected consumers; it wins
	// over Injected and Mesh.
	Exclude []Selection `json:"exclude,omitempty"`
	// Waves spreads the roll of one trust change over time.
	Waves *Waves `json:"waves,omitempty"`
}

// InjectsTrust reports whether the bundle has injected consumers to find
// (a mesh preset or injected selections).
func (r Restart) InjectsTrust() bool { return r.Mesh != "" || len(r.Injected) > 0 }

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

// Default sets Auto to true when unset, and the waves' interval.
func (r *Restart) Default() {
	if r.Auto == nil {
		yes := true
		r.Auto = &yes
	}
	if r.Waves != nil && r.Waves.Interval == nil {
		r.Waves.Interval = &Duration{DefaultWaveInterval}
	}
}

func (r Restart) validate(path string) FieldErrors {
	var errs FieldErrors
	if r.Mesh != "" && !slices.Contains(Meshes, r.Mesh) {
		errs.add(path+".mesh", "%s is not one of %s", kube.Quote(r.Mesh), strings.Join(Meshes, ", "))
	}
	for i, s := range r.Injected {
		errs = append(errs, s.validate(fmt.Sprintf("%s.injected[%d]", path, i))...)
	}
	for i, s := range r.Exclude {
		errs = append(errs, s.validate(fmt.Sprintf("%s.exclude[%d]", path, i))...)
	}
	if len(r.Exclude) > 0 && !r.InjectsTrust() {
		errs.add(path+".exclude", "excludes from injected consumers, but the bundle has none: set restart.mesh or restart.injected")
	}
	if r.Waves != nil {
		errs = append(errs, r.Waves.validate(path+".waves")...)
	}
	seen := map[WorkloadRef]int{}
	for i, w := range r.Workloads {
		wp := fmt.Sprintf("%s.workloads[%d]", path, i)
		if !slices.Contains(WorkloadKinds, w.Kind) {
			errs.add(wp+".kind", "%s is not one of %s, %s, %s, %s (the kinds with a pod template rotate-certs can roll; Jobs and CronJobs read the new bundle on their next run)",
				kube.Quote(w.Kind), WorkloadKinds[0], WorkloadKinds[1], WorkloadKinds[2], WorkloadKinds[3])
		}
		ok := errs.checkObjectName(wp+".name", "workload", w.Name)
		ok = errs.checkNamespace(wp+".namespace", w.Namespace) && ok
		if j, dup := seen[w]; dup && ok && slices.Contains(WorkloadKinds, w.Kind) {
			errs.add(wp, "duplicate of %s.workloads[%d] (%s)", path, j, w)
		}
		seen[w] = i
	}
	return errs
}
