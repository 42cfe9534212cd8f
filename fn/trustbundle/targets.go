package trustbundle

import (
	"crypto/x509"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
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

// readTarget returns the certificates the existing target holds (the
// bundle's memory of previous CAs) and the field they were read from ("" when
// the target has no such key).
func (r *renderer) readTarget(node *yaml.RNode) ([]*x509.Certificate, string, bool) {
	ref := kube.RefOf(node)
	if kube.IsSOPSEncrypted(node) {
		r.errorf(ref, "sops", "bundle %q: target %s is SOPS-encrypted; a trust bundle holds only public certificates - keep it unencrypted", r.bundle.Name, ref)
		return nil, "", false
	}
	v, found, err := kube.Lookup(node, r.bundle.Target.Key)
	if err != nil {
		r.errorf(ref, kube.FieldOf(err), "bundle %q: target %s: %v", r.bundle.Name, ref, err)
		return nil, "", false
	}
	if !found || strings.TrimSpace(string(v.Bytes)) == "" {
		return nil, v.Field, true
	}
	if len(v.Bytes) > MaxValueBytes {
		r.errorf(ref, v.Field, "bundle %q: existing target %s %s is %s; fix or delete the value so the bundle can be rebuilt", r.bundle.Name, ref, v.Field, tooLarge(len(v.Bytes)))
		return nil, "", false
	}
	d, err := r.decodePEM(v.Bytes)
	if err != nil {
		r.errorf(ref, v.Field, "bundle %q: existing target %s %s is not PEM certificate data (%v); fix or delete the value so the bundle can be rebuilt", r.bundle.Name, ref, v.Field, err)
		return nil, "", false
	}
	if len(d.SkippedTypes) > 0 {
		r.add(ref.Result(framework.Warning, v.Field, fmt.Sprintf("bundle %q: existing target held %d non-certificate PEM block(s) (%s); they are removed",
			r.bundle.Name, len(d.SkippedTypes), strings.ToLower(strings.Join(d.SkippedTypes, ", ")))))
	}
	return d.Certificates, v.Field, true
}

// sameSet reports whether a and b hold the same certificates, ignoring
// order and repeats: whether a target's trust is unchanged.
func sameSet(a, b []*x509.Certificate) bool {
	sa, sb := pki.NewSet(a...), pki.NewSet(b...)
	if sa.Len() != sb.Len() {
		return false
	}
	for _, c := range sb.List() {
		if !sa.Has(c) {
			return false
		}
	}
	return true
}

// warnImmutable warns when the data of an immutable target changes: the
// API server refuses any update of an immutable Secret's or ConfigMap's
// data, so the object has to be replaced.
func (r *renderer) warnImmutable(node *yaml.RNode, field string) {
	f := node.Field("immutable")
	if f == nil || f.Value == nil || f.Value.YNode().Kind != yaml.ScalarNode || f.Value.YNode().Value != "true" {
		return
	}
	ref := kube.RefOf(node)
	r.add(ref.Result(framework.Warning, "immutable", fmt.Sprintf(
		"bundle %q: target %s is immutable: true and its %s changed; the API server refuses to update an immutable object's data (kubectl apply fails with \"field is immutable\"), so it must be deleted and re-created (kubectl replace --force, Argo CD sync option Replace=true, Flux force: true); dropping immutable: true from the target makes later bundles apply in place, but only once the object was re-created without it: the API server refuses to unset the field too",
		r.bundle.Name, ref, field)))
}

// warnNoneValid warns when no certificate of the rendered bundle is valid
// at render time: only not-yet-valid CAs are left (a pre-distributed next
// CA rendered alone, in Copy mode or into a new target), so every handshake
// that relies on the bundle fails until the earliest of them becomes valid.
func (r *renderer) warnNoneValid(ref kube.Ref, field string, o anchors.Outcome) {
	certs := o.Certificates()
	var earliest *x509.Certificate
	for _, c := range certs {
		if !r.env.Now.Before(c.NotBefore) && !pki.Expired(c, r.env.Now) {
			return
		}
		if earliest == nil || c.NotBefore.Before(earliest.NotBefore) {
			earliest = c
		}
	}
	if earliest == nil {
		return
	}
	r.add(ref.Result(framework.Warning, field, fmt.Sprintf(
		"bundle %q: no certificate in the bundle is valid now: %d not yet valid, the earliest %s from %s; every TLS handshake that relies on this bundle fails until then - keep the CA that signs today's certificates in the sources until the new one is valid",
		r.bundle.Name, len(certs), pki.Describe(earliest), earliest.NotBefore.UTC().Format(time.RFC3339))))
}

// newTarget builds an absent Secret or ConfigMap target (newObject).
func (r *renderer) newTarget(key kube.Key) *yaml.RNode {
	node := r.newObject("v1", key)
	if key.Kind == "Secret" {
		_ = node.PipeE(yaml.SetField("type", yaml.NewStringRNode("Opaque")))
	}
	return node
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
		file := strings.ToLower(key.Kind) + "_"
		if key.Namespace != "" {
			file += key.Namespace + "_"
		}
		file += strings.ReplaceAll(key.Name, ":", "_") + ".yaml"
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

// origin is where a current certificate was read: a source object's field,
// or the policy's inline source.
type origin struct {
	ref   kube.Ref
	field string
}

// from records where certs were read, first occurrence kept.
func (r *renderer) from(ref kube.Ref, field string, certs []*x509.Certificate) {
	if r.origins == nil {
		r.origins = map[pki.Fingerprint]origin{}
	}
	for _, c := range certs {
		fp := pki.FingerprintOf(c)
		if _, ok := r.origins[fp]; !ok {
			r.origins[fp] = origin{ref, field}
		}
	}
}

// reportExpiredSources warns, once per bundle, about each expired source
// certificate, at the source object and field it was read from: bundle
// rule 1 drops it from every target alike.
func (r *renderer) reportExpiredSources(current []*x509.Certificate) {
	seen := pki.NewSet()
	for _, c := range current {
		if !seen.Add(c) || !pki.Expired(c, r.env.Now) {
			continue
		}
		o, ok := r.origins[pki.FingerprintOf(c)]
		if !ok {
			o = origin{ref: r.env.PolicyRef, field: r.path + ".sources"}
		}
		r.add(o.ref.Result(framework.Warning, o.field, fmt.Sprintf("bundle %q: source certificate %s has expired and is not trusted", r.bundle.Name, pki.Describe(c))))
	}
}

// maxNamed caps how many certificates one result lists.
const maxNamed = 5

// named lists certificates as results name them: their subject and where
// each is held, the first maxNamed of them.
func named(held []anchors.Held) string {
	var where []string
	for i, h := range held {
		if i == maxNamed {
			where = append(where, fmt.Sprintf("and %d more", len(held)-maxNamed))
			break
		}
		where = append(where, fmt.Sprintf("%q in %s", pki.Subject(h.Cert), h.Where))
	}
	return strings.Join(where, ", ")
}

// reportDecisions turns the merge into results on the target ref, at
// field: the current certificates it dropped, and the verdict of every
// previous CA.
func (r *renderer) reportDecisions(ref kube.Ref, field string, o anchors.Outcome) {
	// An expired current certificate is reported once per bundle, at its
	// source (reportExpiredSources).
	for _, f := range o.Fates {
		c := pki.Describe(f.Cert)
		var sev framework.Severity = framework.Info
		var msg string
		switch f.State {
		case anchors.FateProtected:
			sev = framework.Warning
			msg = fmt.Sprintf("previous CA %s is kept beyond the retain policy because valid certificate(s) still chain to it: %s; re-issue them from a current CA before the old CA can go (or set retain.protectIssuers: false)",
				c, named(f.Dependents))
		case anchors.FateRemembered:
			msg = fmt.Sprintf("previous CA %s is not in the bundle (Copy mode); annotation %s keeps it, so that switching back to Bundle mode restores it", c, PreviousAnnotation)
		case anchors.FateDropped:
			msg = fmt.Sprintf("dropped previous CA %s (%s)", c, f.Reason)
			if len(f.Dependents) > 0 {
				sev = framework.Warning
				msg += fmt.Sprintf(", although valid certificate(s) still chain to it: %s; peers that trust only this bundle reject them - re-issue them from a current CA now", named(f.Dependents))
			}
		default:
			msg = fmt.Sprintf("previous CA %s, retired %s: %s", c, f.RetiredAt.Format(time.RFC3339), f.Verdict)
			if len(f.Dependents) > 0 {
				msg += fmt.Sprintf("; %d certificate(s) chain to it: %s", len(f.Dependents), named(f.Dependents))
			} else {
				msg += "; nothing in the input chains to it"
			}
		}
		r.add(ref.Result(sev, field, fmt.Sprintf("bundle %q: %s", r.bundle.Name, msg)))
	}
}
