package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

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
	// Kind is one of the rolled kinds of WorkloadKinds.
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

// setDefaults sets Auto to true when unset, and the waves' interval.
func (r *Restart) setDefaults() {
	if r.Auto == nil {
		yes := true
		r.Auto = &yes
	}
	if r.Waves != nil && r.Waves.Interval == nil {
		r.Waves.Interval = &Duration{defaultWaveInterval}
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
	return append(errs, r.validateWorkloads(path, WorkloadKinds())...)
}

// validateWorkloads checks restart.workloads against the rolled kinds of
// kinds.
func (r Restart) validateWorkloads(path string, kinds WorkloadTable) FieldErrors {
	var errs FieldErrors
	rolled := kinds.Rolled()
	seen := map[WorkloadRef]int{}
	for i, w := range r.Workloads {
		wp := fmt.Sprintf("%s.workloads[%d]", path, i)
		known := slices.Contains(rolled, w.Kind)
		if !known {
			errs.add(wp+".kind", "%s is not one of %s (the kinds with a pod template rotate-certs can roll; Jobs and CronJobs read the new bundle on their next run)",
				kube.Quote(w.Kind), strings.Join(rolled, ", "))
		}
		ok := errs.checkObjectName(wp+".name", "workload", w.Name)
		ok = errs.checkNamespace(wp+".namespace", w.Namespace) && ok
		if j, dup := seen[w]; dup && ok && known {
			errs.add(wp, "duplicate of %s.workloads[%d] (%s)", path, j, w)
		}
		seen[w] = i
	}
	return errs
}
