package restart

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// reloadAnnotation is the workload annotation (on the workload's own
// metadata) that says how it picks up a new CA.
const reloadAnnotation = "rotate-certs.dev/reload"

// reload is a workload's reload class.
type reload int

// Reload classes.
const (
	// reloadDefault: the workload loads its CA at start-up; it is rolled
	// whenever the trust it reads changes.
	reloadDefault reload = iota
	// reloadHot: the workload watches its mounted files (Envoy SDS, a file
	// watcher) and needs no restart for a whole-volume mount. Reads fixed
	// at start (env, envFrom, subPath) still roll it: no watcher sees them
	// change.
	reloadHot
	// reloadNever: the workload is never rolled by rotate-certs.
	reloadNever
)

// Annotation values of the reload classes.
const (
	reloadValueHot   = "hot"
	reloadValueNever = "never"
)

// String returns the annotation value, "default" for reloadDefault.
func (r reload) String() string {
	switch r {
	case reloadHot:
		return reloadValueHot
	case reloadNever:
		return reloadValueNever
	default:
		return "default"
	}
}

// parseReload reads the annotation value; set is false when the workload
// has no such annotation. Any other value, the empty string included, is
// an error: a typo must not silently change what rolls.
func parseReload(value string, set bool) (reload, error) {
	if !set {
		return reloadDefault, nil
	}
	switch value {
	case reloadValueHot:
		return reloadHot, nil
	case reloadValueNever:
		return reloadNever, nil
	default:
		return reloadDefault, fmt.Errorf("%s is not a reload class: use %q (the workload watches its mounted files) or %q (never roll it), or remove the annotation",
			kube.Quote(value), reloadValueHot, reloadValueNever)
	}
}

// decision is what to do with one workload for one bundle.
type decision struct {
	// Roll is true when the workload must roll when the bundle changes.
	Roll bool
	// Because is the use that decided: the first static use when rolled
	// for one, else the first use. Zero when there is no use (an explicit
	// entry).
	Because Use
	// Reason explains the decision in a few words.
	Reason string
}

// decide applies the reload rules to the uses a workload makes of one
// bundle's target. explicit is true when the policy names the workload in
// restart.workloads: it rolls whatever its uses, unless it opted out with
// reload: never. Reason is a phrase about the target ("is read through
// env at ..., which never sees an update").
func decide(uses []Use, reload reload, explicit bool) decision {
	var first Use
	if len(uses) > 0 {
		first = uses[0]
	}
	if reload == reloadNever {
		return decision{Because: first, Reason: "cannot roll it: the workload is annotated " + reloadAnnotation + ": never"}
	}
	for _, u := range uses {
		if u.Via == ViaInjected {
			return decision{Roll: true, Because: u, Reason: fmt.Sprintf("is copied into its pods at admission by %s, which never sees an update", u.why)}
		}
	}
	for _, u := range uses {
		if u.Via.fixedAtStart() {
			return decision{Roll: true, Because: u, Reason: fmt.Sprintf("is read through %s at %s, which never sees an update", u.Via, u.Field)}
		}
	}
	if explicit {
		return decision{Roll: true, Because: first, Reason: "is named in restart.workloads"}
	}
	if len(uses) == 0 {
		return decision{Reason: "is not read"}
	}
	if reload == reloadHot {
		return decision{Because: first, Reason: fmt.Sprintf("is mounted as a whole volume at %s, and the workload is annotated %s: hot (it reloads the files by itself)", first.Field, reloadAnnotation)}
	}
	return decision{Roll: true, Because: first, Reason: fmt.Sprintf("is mounted as a whole volume at %s, and the workload is not annotated %s: hot", first.Field, reloadAnnotation)}
}
