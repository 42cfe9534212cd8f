package trustbundle

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Snapshots are the core Secrets and ConfigMaps of the input marked
// config.kubernetes.io/local-config: "true" - copies of objects that live
// only in the cluster, as `rotate-certs snapshot` writes them. kpt and
// kustomize pass them to the function and never apply them. A bundle
// reads them as sources; they are never a target (a target must be applied
// to matter, and writing into a snapshot would hide the live object's next
// change).
type Snapshots struct {
	byKey map[kube.Key]*yaml.RNode
	list  []*yaml.RNode
}

// NewSnapshots indexes the local-config Secrets and ConfigMaps of items.
func NewSnapshots(items []*yaml.RNode) *Snapshots {
	s := &Snapshots{byKey: map[kube.Key]*yaml.RNode{}}
	for _, it := range items {
		if k := it.GetKind(); (k != string(kube.TargetSecret) && k != string(kube.TargetConfigMap)) || it.GetApiVersion() != "v1" || !kube.IsLocalConfig(it) {
			continue
		}
		key := kube.KeyOf(it)
		if _, dup := s.byKey[key]; dup {
			continue
		}
		s.byKey[key] = it
		s.list = append(s.list, it)
	}
	return s
}

// Get returns the snapshot with key k, or nil.
func (s *Snapshots) Get(k kube.Key) *yaml.RNode {
	if s == nil {
		return nil
	}
	return s.byKey[k]
}

// kind returns every snapshot of kind, in input order.
func (s *Snapshots) kind(kind string) []*yaml.RNode {
	if s == nil {
		return nil
	}
	var out []*yaml.RNode
	for _, n := range s.list {
		if n.GetKind() == kind {
			out = append(out, n)
		}
	}
	return out
}

// sourceObject returns the Secret or ConfigMap a source names: the
// manifest when the input has one, else a snapshot. A manifest wins over a
// snapshot of the same object, with a warning: the manifest is what the
// cluster gets next, and two copies that may differ are a mistake.
func (r *renderer) sourceObject(key kube.Key, field string) *yaml.RNode {
	node := r.env.Index.Get(key)
	snap := r.env.Snapshots.Get(key)
	switch {
	case node == nil:
		return snap
	case snap != nil:
		ref := kube.RefOf(snap)
		r.add(ref.Result(framework.Warning, kube.AnnotationField(kube.LocalConfigAnnotation), fmt.Sprintf(
			"bundle %q: source %s is both a manifest and a local-config snapshot; the manifest is read (%s) - delete the snapshot, or the manifest if the object lives in the cluster",
			r.bundle.Name, key, field)))
	}
	return node
}
