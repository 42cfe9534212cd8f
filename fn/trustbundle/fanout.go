package trustbundle

import (
	"crypto/x509"
	"fmt"
	"iter"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The Secret or ConfigMap fan-out: the bundle is written into a Secret or
// ConfigMap of the target's name in every target namespace, at
// target.key, by the write-back rule (writeback.go), with the binary
// truststores of target.additionalFormats beside it (formats.go). A
// target a trust-manager Bundle also writes is refused (bundleclash.go).

// fanOut is the Secret and ConfigMap target kind.
type fanOut struct{ *renderer }

// current returns what the policy's sources hold.
func (r *fanOut) current() ([]*x509.Certificate, bool) { return r.readSources(), true }

// slots yields the target object of each target namespace.
func (r *fanOut) slots() iter.Seq[slot] {
	return func(yield func(slot) bool) {
		r.warnIstiodOwns()
		for _, ns := range r.namespaces() {
			if s, ok := r.read(ns); ok && !yield(s) {
				return
			}
		}
	}
}

// IstioRootCertConfigMap is the ConfigMap istiod writes into every
// namespace from its CA's roots (key root-cert.pem).
const IstioRootCertConfigMap = "istio-ca-root-cert"

// warnIstiodOwns warns when the target is istiod's istio-ca-root-cert: its
// namespace controller rewrites root-cert.pem whenever it differs from the
// roots of istiod's CA, so a rendered overlap is undone at once, and the
// sync tool and istiod fight over the object.
func (r *fanOut) warnIstiodOwns() {
	t := r.bundle.Target
	if t.Kind != kube.TargetConfigMap || t.Name != IstioRootCertConfigMap {
		return
	}
	r.add(r.env.PolicyRef.Result(framework.Warning, r.path+".target.name", fmt.Sprintf(
		"bundle %q: ConfigMap %s is written by istiod into every namespace from the roots of its CA, and istiod overwrites any other value of root-cert.pem, so this bundle is undone as soon as it is applied (and the sync tool and istiod keep rewriting it); with Istio's plug-in CA, target Secret istio-system/cacerts key root-cert.pem, from which istiod writes this ConfigMap",
		r.bundle.Name, IstioRootCertConfigMap)))
}

// namespaces returns the target namespaces: the listed ones, then every
// input Namespace matching the selector, each once.
func (r *fanOut) namespaces() []string {
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
		if seen[name] || n.GetApiVersion() != "v1" || !t.NamespaceSelector.Matches(kube.NamespaceLabels(name, n.GetLabels())) {
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
func (r *fanOut) readsFrom(ns string) bool {
	t := r.bundle.Target
	for _, s := range r.bundle.Sources {
		if ref := s.Ref(); ref != nil && kube.TargetKind(s.Kind()) == t.Kind && ref.Name == t.Name && ref.Namespace == ns && ref.Key == t.Key {
			return true
		}
	}
	return false
}

// secretTypeTLS is the type of a Secret whose tls.crt and tls.key are a
// server's certificate and private key, which the API server requires.
const secretTypeTLS = "kubernetes.io/tls"

// servingKeys are the keys of a kubernetes.io/tls Secret that are its
// server's own: never a trust bundle's target.
var servingKeys = map[string]bool{"tls.crt": true, "tls.key": true}

// readTarget returns the certificates the existing target holds (the
// bundle's memory of previous CAs) and the field they were read from ("" when
// the target has no such key).
func (r *fanOut) readTarget(node *yaml.RNode) ([]*x509.Certificate, string, bool) {
	ref := kube.RefOf(node)
	if kube.IsSOPSEncrypted(node) {
		r.errorf(ref, "sops", "bundle %q: target %s is SOPS-encrypted; a trust bundle holds only public certificates - keep it unencrypted", r.bundle.Name, ref)
		return nil, "", false
	}
	if key := r.bundle.Target.Key; node.GetKind() == string(kube.TargetSecret) && servingKeys[key] && kube.ScalarAt(node, "type") == secretTypeTLS {
		field := dataFieldOf(node, key)
		r.errorf(ref, field, "bundle %q: target %s is a %s Secret and %s is its own serving certificate or key; a trust bundle never replaces them - write the bundle to another key (ca.crt) or another Secret",
			r.bundle.Name, ref, secretTypeTLS, key)
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
	if len(v.Bytes) > maxValueBytes {
		r.errorf(ref, v.Field, "bundle %q: existing target %s %s is %s; fix or delete the value so the bundle can be rebuilt", r.bundle.Name, ref, v.Field, tooLarge(len(v.Bytes)))
		return nil, "", false
	}
	d, err := r.env.Certs.DecodePEM(v.Bytes)
	if err != nil {
		r.errorf(ref, v.Field, "bundle %q: existing target %s %s is not PEM certificate data (%v); fix or delete the value so the bundle can be rebuilt", r.bundle.Name, ref, v.Field, err)
		return nil, "", false
	}
	if d.HasPrivateKey() {
		r.errorf(ref, v.Field, "bundle %q: target %s %s holds a private key; rotate-certs never overwrites, copies or moves key material - point target.key at the value that holds the CA certificates (Istio's cacerts: root-cert.pem; a TLS Secret: ca.crt)",
			r.bundle.Name, ref, v.Field)
		return nil, "", false
	}
	if len(d.SkippedTypes) > 0 {
		r.add(ref.Result(framework.Warning, v.Field, fmt.Sprintf("bundle %q: existing target held %d non-certificate PEM block(s) (%s); they are removed",
			r.bundle.Name, len(d.SkippedTypes), strings.ToLower(strings.Join(d.SkippedTypes, ", ")))))
	}
	return d.Certificates, v.Field, true
}

// warnImmutable warns when the data of an immutable target changes: the
// API server refuses any update of an immutable Secret's or ConfigMap's
// data, so the object has to be replaced.
func (r *fanOut) warnImmutable(node *yaml.RNode, field string) {
	if immutable, _ := kube.BoolAt(node, "immutable"); !immutable {
		return
	}
	ref := kube.RefOf(node)
	r.add(ref.Result(framework.Warning, "immutable", fmt.Sprintf(
		"bundle %q: target %s is immutable: true and its %s changed; the API server refuses to update an immutable object's data (kubectl apply fails with \"field is immutable\"), so it must be deleted and re-created (kubectl replace --force, Argo CD sync option Replace=true, Flux force: true); dropping immutable: true from the target makes later bundles apply in place, but only once the object was re-created without it: the API server refuses to unset the field too",
		r.bundle.Name, ref, field)))
}

// newTarget builds an absent Secret or ConfigMap target (newObject).
func (r *fanOut) newTarget(key kube.Key) *yaml.RNode {
	node := r.newObject("v1", key)
	if key.Kind == string(kube.TargetSecret) {
		_ = node.PipeE(yaml.SetField("type", yaml.NewStringRNode("Opaque")))
	}
	return node
}

// read reads the target object of namespace ns: the slot of its key, or
// false when it must not be written (another writer's, not a core v1
// object, only a snapshot) or cannot be read.
func (r *fanOut) read(ns string) (slot, bool) {
	t := r.bundle.Target
	key := kube.Key{Kind: string(t.Kind), Namespace: ns, Name: t.Name}
	r.warnGatewayKey(key)
	if !r.trustManagerWrites(key) {
		return slot{}, false
	}
	node := r.env.Index.Get(key)
	if node != nil && node.GetApiVersion() != "v1" {
		// Not another object: writing a new one beside it would leave two
		// copies of the target, the stale one holding the previous CAs
		// (found by FuzzProcess: a misspelt apiVersion key).
		r.errorf(kube.RefOf(node), "apiVersion", "bundle %q: target %s has apiVersion %s; a %s target must be a core v1 %s - fix its apiVersion",
			r.bundle.Name, key, kube.Quote(node.GetApiVersion()), key.Kind, key.Kind)
		return slot{}, false
	}
	if snap := r.env.Snapshots.Get(key); node == nil && snap != nil {
		r.errorf(kube.RefOf(snap), kube.AnnotationField(kube.LocalConfigAnnotation),
			"bundle %q: target %s is in the input only as a local-config snapshot, which kustomize and kpt never apply: a snapshot copies an object that lives in the cluster and is a source, never a target - commit the target as a plain manifest (without %s)",
			r.bundle.Name, key, kube.LocalConfigAnnotation)
		return slot{}, false
	}
	s := slot{key: key, ref: kube.Ref{APIVersion: "v1", Kind: key.Kind, Namespace: key.Namespace, Name: key.Name}, node: node,
		memKey: t.Key, field: "data." + t.Key, limit: maxValueBytes, limitWhy: secretLimit}
	if node != nil {
		var prevField string
		var ok bool
		if s.previous, prevField, ok = r.readTarget(node); !ok {
			return slot{}, false
		}
		s.ref = kube.RefOf(node)
		if prevField != "" {
			s.field = prevField
		}
	}
	return s, true
}

// write stores the PEM under target.key by the write-back rule, and the
// truststores of target.additionalFormats beside it.
func (r *fanOut) write(s slot, res *Target, pem []byte) (bool, bool) {
	t := r.bundle.Target
	node := s.node
	if node == nil {
		node = r.newTarget(s.key)
		r.created(res, node, s.key)
	}
	ref := kube.RefOf(node)
	field, valueChanged, err := SetValue(node, t.Key, pem)
	if err != nil {
		r.errorf(ref, "", "bundle %q: %v", r.bundle.Name, err)
		return false, false
	}
	if strings.HasPrefix(s.field, "binaryData.") { // read from binaryData
		r.add(ref.Result(framework.Info, field, fmt.Sprintf("bundle %q: moved %s from binaryData to data: a PEM bundle is text, and the API server rejects a ConfigMap that holds a key in both",
			r.bundle.Name, t.Key)))
	}
	formatsChanged, err := r.writeFormats(node, res.Outcome.Certificates())
	if err != nil {
		r.errorf(ref, "", "bundle %q: %v", r.bundle.Name, err)
		return false, false
	}
	res.field = field
	res.keys = t.Keys()
	if (valueChanged || formatsChanged) && !res.Created {
		r.warnImmutable(node, field)
	}
	return valueChanged || formatsChanged, true
}
