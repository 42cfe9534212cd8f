package trustbundle

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// namespaceLabels returns the labels of namespace ns as a selector sees
// them: the Namespace's own when it is in the input, and always the name
// label the API server sets.
func (r *fanOut) namespaceLabels(ns string) map[string]string {
	var own map[string]string
	if n := r.env.Index.Get(kube.Key{Kind: "Namespace", Name: ns}); n != nil {
		own = n.GetLabels()
	}
	return kube.NamespaceLabels(ns, own)
}

// trustManagerWrites refuses a Secret or ConfigMap target that a
// trust-manager Bundle of the input also writes - the Bundle's name, a key
// it writes (spec.target.configMap or .secret key, or an additional
// format's), in a namespace its namespaceSelector selects (every one when
// unset): trust-manager would overwrite what rotate-certs writes on every
// sync, and the GitOps tool would put it back. The error names the Bundle
// and the ways out. It reports whether the target may be written.
func (r *fanOut) trustManagerWrites(key kube.Key) bool {
	t := r.bundle.Target
	for _, node := range r.env.Index.KindIn(TrustManagerGroup, certmanager.KindBundle) {
		bt, ok := certmanager.ReadBundleTarget(node)
		if !ok || bt.Name != key.Name || !bt.Writes(key.Kind, t.Key) || !bt.Selects(r.namespaceLabels(key.Namespace)) {
			continue
		}
		ref := kube.RefOf(node)
		field := "spec.target.configMap"
		if key.Kind == string(kube.TargetSecret) {
			field = "spec.target.secret"
		}
		where := "every namespace (no namespaceSelector)"
		if bt.Selector != nil {
			where = fmt.Sprintf("namespace %s (its namespaceSelector selects it)", key.Namespace)
		}
		r.errorf(ref, field, "bundle %q: target %s key %s (%s.target) is also written by trust-manager %s, which writes key %s of %s %s in %s: two writers never stay in sync - either set the target to kind: Bundle, name: %s, to let rotate-certs carry the previous CAs through that Bundle, or give the target another name or key",
			r.bundle.Name, key, kube.Quote(t.Key), r.path, ref, kube.Quote(t.Key), key.Kind, kube.Quote(bt.Name), where, bt.Name)
		return false
	}
	return true
}
