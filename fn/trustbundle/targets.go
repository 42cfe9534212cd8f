package trustbundle

import (
	"crypto/x509"
	"fmt"
	"path"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/bundle"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// namespaces returns the target namespaces: the listed ones, then every
// input Namespace matching the selector, each once.
func (r *renderer) namespaces() []string {
	t := r.bundle.Target
	seen := map[string]bool{}
	var out []string
	for _, ns := range t.Namespaces {
		if !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	if t.NamespaceSelector == nil {
		return out
	}
	for _, n := range r.env.Index.Kind("Namespace") {
		name := n.GetName()
		if seen[name] || n.GetApiVersion() != "v1" || !t.NamespaceSelector.Matches(n.GetLabels()) {
			continue
		}
		if r.readsFrom(name) {
			r.errorf(kube.RefOf(n), "metadata.labels", "bundle %q: namespaceSelector selects namespace %s, where the target %s %s key %s is also a source: a bundle cannot read what it writes",
				r.bundle.Name, name, t.Kind, t.Name, t.Key)
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}

// readsFrom reports whether a source of the bundle is the target object
// and key in namespace ns.
func (r *renderer) readsFrom(ns string) bool {
	t := r.bundle.Target
	for _, s := range r.bundle.Sources {
		if ref := s.Ref(); ref != nil && s.Kind() == t.Kind && ref.Name == t.Name && ref.Namespace == ns && ref.Key == t.Key {
			return true
		}
	}
	return false
}

// readTarget returns the certificates the existing target holds: the
// bundle's memory of previous CAs.
func (r *renderer) readTarget(node *yaml.RNode) ([]*x509.Certificate, bool) {
	ref := kube.RefOf(node)
	if kube.IsSOPSEncrypted(node) {
		r.errorf(ref, "sops", "bundle %q: target %s is SOPS-encrypted; a trust bundle holds only public certificates - keep it unencrypted", r.bundle.Name, ref)
		return nil, false
	}
	v, found, err := kube.Lookup(node, r.bundle.Target.Key)
	if err != nil {
		r.errorf(ref, kube.FieldOf(err), "bundle %q: target %s: %v", r.bundle.Name, ref, err)
		return nil, false
	}
	if !found || strings.TrimSpace(string(v.Bytes)) == "" {
		return nil, true
	}
	if len(v.Bytes) > MaxValueBytes {
		r.errorf(ref, v.Field, "bundle %q: existing target %s %s is %s; fix or delete the value so the bundle can be rebuilt", r.bundle.Name, ref, v.Field, tooLarge(len(v.Bytes)))
		return nil, false
	}
	d, err := pki.DecodePEM(v.Bytes)
	if err != nil {
		r.errorf(ref, v.Field, "bundle %q: existing target %s %s is not PEM certificate data (%v); fix or delete the value so the bundle can be rebuilt", r.bundle.Name, ref, v.Field, err)
		return nil, false
	}
	if len(d.SkippedTypes) > 0 {
		r.add(ref.Result(framework.Warning, v.Field, fmt.Sprintf("bundle %q: existing target held %d non-certificate PEM block(s) (%s); they are removed",
			r.bundle.Name, len(d.SkippedTypes), strings.ToLower(strings.Join(d.SkippedTypes, ", ")))))
	}
	return d.Certificates, true
}

// newTarget builds an absent target object. It is placed in a file beside
// the first source that came from a file (or the policy's), so that kpt can
// write it back.
func (r *renderer) newTarget(key kube.Key) *yaml.RNode {
	node := yaml.NewMapRNode(nil)
	_ = node.PipeE(yaml.SetField("apiVersion", yaml.NewStringRNode("v1")))
	_ = node.PipeE(yaml.SetField("kind", yaml.NewStringRNode(key.Kind)))
	meta := yaml.NewMapRNode(nil)
	_ = meta.PipeE(yaml.SetField("name", yaml.NewStringRNode(key.Name)))
	if key.Namespace != "" {
		_ = meta.PipeE(yaml.SetField("namespace", yaml.NewStringRNode(key.Namespace)))
	}
	_ = node.PipeE(yaml.SetField("metadata", meta))
	if key.Kind == "Secret" {
		_ = node.PipeE(yaml.SetField("type", yaml.NewStringRNode("Opaque")))
	}
	if dir, ok := r.fileDir(); ok {
		file := strings.ToLower(key.Kind) + "_"
		if key.Namespace != "" {
			file += key.Namespace + "_"
		}
		file += key.Name + ".yaml"
		_ = node.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, path.Join(dir, file)))
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

// maxLeavesNamed caps how many dependent leaves one warning lists.
const maxLeavesNamed = 5

// reportDecisions turns the merge's decisions into results on the target.
func (r *renderer) reportDecisions(key kube.Key, o bundle.Outcome) {
	ref := kube.Ref{APIVersion: "v1", Kind: key.Kind, Namespace: key.Namespace, Name: key.Name}
	if n := r.env.Index.Get(key); n != nil {
		ref = kube.RefOf(n)
	}
	field := "data." + r.bundle.Target.Key
	for _, d := range o.Decisions {
		c := pki.Describe(d.Cert)
		switch d.Reason {
		case bundle.DroppedExpiredCurrent:
			r.add(ref.Result(framework.Warning, field, fmt.Sprintf("bundle %q: source certificate %s has expired and is not trusted", r.bundle.Name, c)))
		case bundle.KeptProtected:
			var where []string
			for i, l := range d.Leaves {
				if i == maxLeavesNamed {
					where = append(where, fmt.Sprintf("and %d more", len(d.Leaves)-maxLeavesNamed))
					break
				}
				where = append(where, fmt.Sprintf("%q in %s", pki.Subject(l.Cert), l.Where))
			}
			r.add(ref.Result(framework.Warning, field, fmt.Sprintf(
				"bundle %q: previous CA %s is kept beyond the retain policy because it still signs valid leaf %s; re-issue that leaf from a current CA before the old CA can go (or set retain.protectIssuers: false)",
				r.bundle.Name, c, strings.Join(where, ", "))))
		default:
			r.add(ref.Result(framework.Info, field, fmt.Sprintf("bundle %q: dropped previous CA %s (%s)", r.bundle.Name, c, d.Reason)))
		}
	}
}
