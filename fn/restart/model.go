// Package restart owns the readers of trust: who reads a trust object,
// and how (Readers, the one answer render's restarts, render's warnings
// and diff's consumers share, and Reader.Once, the one rule for "reads it
// once"), which of those workloads must roll when a trust bundle changes,
// and the roll itself, a content hash written into the pod template
// (docs/design/contract.md, Restart rules).
//
// The decision is plain Go over a small model of a pod template (Template):
// which Secrets, ConfigMaps and ClusterTrustBundles it reads, and how.
// The kinds whose pod templates are read are the rows of the workload-kind
// table, policy.WorkloadKinds (kinds.go picks them); extract.go maps
// their RNodes onto the model; gateway.go reads the caCertificateRefs of
// Gateway API and Envoy Gateway objects. readers.go and index.go match
// readers to Secrets, ConfigMaps, ClusterTrustBundles and what
// trust-manager Bundles write, by the namespace rule and the rule for
// copies (namespace.go); bundle.go adds the workloads a bundle's rules
// inject (inject.go: restart.mesh, restart.injected) or name. apply.go and
// match.go decide who rolls; plan.go and waves.go spread a roll over waves
// (restart.waves) with its record on the targets; apply.go writes the one
// annotation back in place.
package restart

import "github.com/rotate-certs/rotate-certs/fn/kube"

// Via is how a pod template reads an object. It decides whether a running
// pod can ever see an update of that object.
type Via int

// The ways a pod reads a Secret or ConfigMap, from the one a pod can
// follow to the ones it cannot.
const (
	// ViaVolume is a whole-volume mount: the kubelet updates the files in
	// place, so a process that watches them reloads without a restart.
	ViaVolume Via = iota
	// ViaSubPath is a subPath (or subPathExpr) mount: the file is bound
	// once at container start and never updated.
	ViaSubPath
	// ViaEnv is env[].valueFrom: the value is copied into the process
	// environment at start.
	ViaEnv
	// ViaEnvFrom is envFrom: every key is copied into the environment at
	// start.
	ViaEnvFrom
	// ViaInjected is trust that something copies into each pod at
	// admission (a mesh's proxy injector): the pod keeps the copy it was
	// created with, and the template in git does not show it.
	ViaInjected
	// ViaNamed is a workload a policy bundle's restart.workloads names as
	// a reader of the bundle, whatever its template shows.
	ViaNamed
	// ViaCARef is a Gateway API or Envoy Gateway caCertificateRefs entry:
	// the gateway's controller watches the object and follows each
	// update.
	ViaCARef
	// ViaAPIServer is a caBundle field, which the API server reads on
	// each call it makes to the webhook or API service.
	ViaAPIServer
	// ViaOwnEnv is trust a workload's own pod template holds as a value
	// (an env value: `linkerd inject` writes the mesh's anchors into every
	// proxy's env): its containers read it once, at start. A change of it
	// is a change of the template, which replaces the pods whatever
	// rotate-certs.dev/reload says.
	ViaOwnEnv
)

// String names the path as messages show it.
func (v Via) String() string {
	switch v {
	case ViaVolume:
		return "volume"
	case ViaSubPath:
		return "subPath mount"
	case ViaEnv:
		return "env"
	case ViaEnvFrom:
		return "envFrom"
	case ViaInjected:
		return "injection at admission"
	case ViaNamed:
		return "restart.workloads"
	case ViaCARef:
		return "caCertificateRefs"
	case ViaAPIServer:
		return "API server"
	case ViaOwnEnv:
		return "its own env value"
	default:
		return "unknown"
	}
}

// fixedAtStart reports whether a pod reading through v keeps the value it
// started with until it is restarted: a subPath mount, env, envFrom,
// injection at admission and its own env value. A whole-volume mount is
// updated in place by the kubelet; a gateway's controller and the API
// server follow updates.
func (v Via) fixedAtStart() bool {
	return v == ViaSubPath || v == ViaEnv || v == ViaEnvFrom || v == ViaInjected || v == ViaOwnEnv
}

// Object is an object a pod template refers to, by kind and name: a
// Secret or ConfigMap in the workload's namespace (kindSecret,
// kindConfigMap), or a cluster-scoped ClusterTrustBundle a projected
// volume names (kindClusterTrustBundle) or selects by signer (kindSigner,
// Name the signer name). Each kind of object a pod reads is the target
// kind of that name, so a target's key finds the pods that read it.
type Object struct {
	// kind is kindSecret, kindConfigMap, kindClusterTrustBundle or
	// kindSigner.
	kind string
	// name of the object, or the signer name.
	name string
}

// Kinds of the objects a pod template reads.
const (
	// kindSecret is a Secret a volume, projected volume source or
	// environment variable names.
	kindSecret = string(kube.TargetSecret)
	// kindConfigMap is a ConfigMap a volume, projected volume source or
	// environment variable names.
	kindConfigMap = string(kube.TargetConfigMap)
	// kindClusterTrustBundle is a ClusterTrustBundle named by a projected
	// volume source (clusterTrustBundle.name).
	kindClusterTrustBundle = string(kube.TargetClusterTrustBundle)
	// kindSigner stands for the ClusterTrustBundles of one signer that a
	// projected volume source selects (clusterTrustBundle.signerName and
	// labelSelector).
	kindSigner = "ClusterTrustBundle signer"
)

// Template is what rotate-certs needs to know of a pod template.
type Template struct {
	// Volumes are the pod's volumes that are backed by Secrets or
	// ConfigMaps.
	Volumes []Volume
	// Containers are the containers and init containers.
	Containers []Container
}

// Volume is a pod volume backed by one object (secret, configMap) or
// several (projected sources).
type Volume struct {
	// Name is the volume's name, which mounts refer to.
	Name string
	// Sources are the objects the volume projects.
	Sources []Ref
}

// Ref is one reference to an object at a field of the template.
type Ref struct {
	Object
	// field is the field path of the reference, for results.
	field string
	// Projected is true for a source of a projected volume.
	Projected bool
	// Var is, for an env reference, the variable it sets.
	Var string
	// selector is, for a projected clusterTrustBundle source by signer
	// name, its labelSelector; nil when unset, which the API reads as
	// "match nothing".
	selector *kube.Selector
}

// Container is a container or init container.
type Container struct {
	// Env are the env[].valueFrom secretKeyRef and configMapKeyRef
	// references.
	Env []Ref
	// EnvFrom are the envFrom secretRef and configMapRef references.
	EnvFrom []Ref
	// mounts are the container's volume mounts.
	mounts []mount
}

// mount is one volumeMounts entry.
type mount struct {
	// volume is the mounted volume's name.
	volume string
	// subPath is true when the mount sets subPath or subPathExpr.
	subPath bool
	// field is the mount's field path.
	field string
}

// Use is one way a template reads an object.
type Use struct {
	// Object is what is read.
	Object Object
	// Via is how.
	Via Via
	// Field is where the template says so.
	Field string
	// selector is the labelSelector of a projected clusterTrustBundle
	// source by signer name (see Ref.Selector).
	selector *kube.Selector
	// why says, for ViaInjected, which rule injects the pod.
	why string
}

// uses lists every read of a Secret or ConfigMap by the template, in
// template order: env and envFrom references of each container, then, per
// volume source, one use per mount of the volume (a subPath mount is
// ViaSubPath, a whole mount ViaVolume). A volume no container mounts still
// counts as a whole-volume use at its source: the template references the
// object, and a sidecar injected later may mount it.
func (t Template) uses() []Use {
	var out []Use
	mounts := map[string][]mount{}
	for _, c := range t.Containers {
		for _, r := range c.Env {
			out = append(out, Use{Object: r.Object, Via: ViaEnv, Field: r.field})
		}
		for _, r := range c.EnvFrom {
			out = append(out, Use{Object: r.Object, Via: ViaEnvFrom, Field: r.field})
		}
		for _, m := range c.mounts {
			mounts[m.volume] = append(mounts[m.volume], m)
		}
	}
	for _, v := range t.Volumes {
		for _, s := range v.Sources {
			ms := mounts[v.Name]
			if len(ms) == 0 {
				out = append(out, Use{Object: s.Object, Via: ViaVolume, Field: s.field, selector: s.selector})
				continue
			}
			for _, m := range ms {
				via := ViaVolume
				if m.subPath {
					via = ViaSubPath
				}
				out = append(out, Use{Object: s.Object, Via: via, Field: m.field, selector: s.selector})
			}
		}
	}
	return out
}

// groupByObject groups uses by the object they read, keeping template order
// within each group.
func groupByObject(uses []Use) map[Object][]Use {
	out := map[Object][]Use{}
	for _, u := range uses {
		out[u.Object] = append(out[u.Object], u)
	}
	return out
}
