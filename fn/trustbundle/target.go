package trustbundle

import (
	"crypto/x509"
	"fmt"
	"iter"
	"path"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// targetKind is one kind of object a trust bundle is written into, one
// file each: a Secret or ConfigMap in every target namespace (fanout.go),
// PEM at a field of one cluster-scoped object such as a ClusterTrustBundle
// (clustertrustbundle.go), a trust-manager Bundle (trustmanager.go), and
// the caBundle fields of webhook configurations, APIServices and CRD
// conversion webhooks (inject.go).
//
// Render picks a bundle's kinds once (targetKinds) and drives each the
// same way (renderKind): the kind reads the values the bundle writes, the
// trust bundle rules merge what each holds with the current CAs (slot.go),
// the kind writes the result back, and memory.go reads and writes the
// memory annotations. What each kind is - group, versions, scope, the
// policy fields that apply, how it holds a bundle - is its row of the
// target-kind table (kube.TargetKinds), which validation, the schema, the
// scope of keys, reads.go and the report read too: a kind that holds a
// bundle as an existing kind does is that row alone; one that holds it in
// a new way is a kube.TargetStore, a type with these methods and its case
// in targetKinds.
type targetKind interface {
	// current returns the bundle's current CAs, with where each was read
	// recorded (renderer.from): what the policy's sources hold
	// (readSources), except for a kind whose own object lists the sources
	// (a trust-manager Bundle). Render asks the first kind of the bundle.
	// ok is false when the render must stop; the problem is in the
	// results.
	current() (certs []*x509.Certificate, ok bool)
	// slots reads the existing target objects and yields, in order, one
	// slot per value the bundle writes: its object (nil when it is absent
	// and is to be created), what the value holds (its previous state)
	// and where. Each slot is read when the one before it has been
	// rendered, so results stay in that order. A value that cannot be
	// read or must not be written is reported and not yielded.
	slots() iter.Seq[slot]
	// write writes pem, the rendered bundle of slot s (t.Outcome), into
	// the slot's value and completes t: it creates the object when s has
	// none (renderer.created), and sets t.field and t.keys when they are
	// not the slot's. It returns whether the value changed; ok is false
	// when nothing could be written (the problem is in the results).
	write(s slot, t *Target, pem []byte) (changed, ok bool)
}

// targetKinds returns the target kinds of the bundle, in render order:
// the kind of its target object (none when the bundle only injects), then
// the caBundle fields it injects into. It is the one place a kind is
// chosen: by how its row of the target-kind table (the one Env.Index keys
// objects by) says it holds a bundle.
func (r *renderer) targetKinds() []targetKind {
	var kinds []targetKind
	if d, ok := r.env.Index.Targets().Lookup(r.bundle.Target.Kind); ok {
		switch d.Store {
		case kube.StoreKeys:
			kinds = append(kinds, &fanOut{r})
		case kube.StoreField:
			kinds = append(kinds, &fieldTarget{renderer: r, d: d})
		case kube.StoreSources:
			kinds = append(kinds, &trustManager{renderer: r})
		}
	}
	return append(kinds, &caBundles{r})
}

// renderKind renders every value kind k yields and returns the targets
// written.
func (r *renderer) renderKind(k targetKind, current []*x509.Certificate) []Target {
	var out []Target
	for s := range k.slots() {
		if t, ok := r.renderSlot(k, s, current); ok {
			out = append(out, t)
		}
	}
	return out
}

// renderSlot merges slot s with the current CAs, has kind k write the
// result, keeps the slot's seen annotation (memory.go) and completes the
// target.
func (r *renderer) renderSlot(k targetKind, s slot, current []*x509.Certificate) (Target, bool) {
	t, pem, ok := r.merge(s, current)
	if !ok {
		return Target{}, false
	}
	changed, ok := k.write(s, &t, pem)
	if !ok {
		return Target{}, false
	}
	seenChanged, ok := r.writeSeen(s, t)
	if !ok {
		return Target{}, false
	}
	r.complete(&t, s, changed || seenChanged)
	return t, true
}

// created makes node, an object that was not in the input, target t's
// object, and reports it.
func (r *renderer) created(t *Target, node *yaml.RNode, key kube.Key) {
	t.Node, t.Created = node, true
	r.add(kube.RefOf(node).Result(framework.Warning, "",
		fmt.Sprintf("bundle %q: target %s was not in the input and was created%s", r.bundle.Name, key, noState)))
}

// newObject builds an absent target object and adds it to the index. It is
// placed in a file beside the first source that came from a file (or the
// policy's), so that kpt can write it back.
func (r *renderer) newObject(apiVersion string, key kube.Key) *yaml.RNode {
	node := yaml.NewMapRNode(nil)
	_ = node.PipeE(yaml.SetField("apiVersion", yaml.NewStringRNode(apiVersion)))
	_ = node.PipeE(yaml.SetField("kind", yaml.NewStringRNode(key.Kind)))
	meta := yaml.NewMapRNode(nil)
	_ = meta.PipeE(yaml.SetField("name", yaml.NewStringRNode(key.Name)))
	if key.Namespace != "" {
		_ = meta.PipeE(yaml.SetField("namespace", yaml.NewStringRNode(key.Namespace)))
	}
	_ = node.PipeE(yaml.SetField("metadata", meta))
	if dir, ok := r.fileDir(); ok {
		_ = node.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, path.Join(dir, kube.NewFileName(key))))
		_ = node.PipeE(yaml.SetAnnotation(kioutil.IndexAnnotation, "0"))
	}
	r.env.Index.Add(node)
	return node
}

func (r *renderer) fileDir() (string, bool) {
	for _, s := range r.bundle.Sources {
		ref := s.Ref()
		if ref == nil {
			continue
		}
		if n := r.env.Index.Get(kube.Key{Kind: s.Kind(), Namespace: ref.Namespace, Name: ref.Name}); n != nil {
			if p, _ := kube.FileOf(n); p != "" {
				return path.Dir(p), true
			}
		}
	}
	if r.env.PolicyRef.Path != "" {
		return path.Dir(r.env.PolicyRef.Path), true
	}
	return "", false
}
