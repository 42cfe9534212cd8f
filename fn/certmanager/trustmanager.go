package certmanager

import (
	"errors"
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// trust-manager (cert-manager's trust distributor, v0.24/v0.25): a
// cluster-scoped Bundle unions its sources - Secrets and ConfigMaps of
// the trust namespace, inLine PEM, the default CA package - into a
// ConfigMap and/or a Secret named like the Bundle, in every namespace its
// spec.target.namespaceSelector selects.
const (
	// trustGroup is trust-manager's API group of Bundles.
	trustGroup = "trust.cert-manager.io"
	// KindBundle is a trust-manager Bundle.
	KindBundle = "Bundle"
)

// IsBundle reports whether node is a trust-manager Bundle (any version of
// its group).
func IsBundle(node *yaml.RNode) bool {
	return node.GetKind() == KindBundle && kube.GroupOf(node.GetApiVersion()) == trustGroup
}

// BundleTarget is what a trust-manager Bundle writes: an object named
// like the Bundle, of each kind Keys names, at those keys, in every
// namespace Selector selects (every namespace when nil).
type BundleTarget struct {
	// Name is the Bundle's name, and the written objects'.
	Name string
	// Keys maps ConfigMap and Secret (the kinds the Bundle writes) to the
	// keys it writes in them: the PEM key of spec.target.configMap or
	// .secret, then the keys of spec.target.additionalFormats (jks,
	// pkcs12).
	Keys map[string][]string
	// Selector is spec.target.namespaceSelector.
	Selector *kube.Selector
}

// ReadBundleTarget reads spec.target of a trust-manager Bundle; false when
// it writes nothing rotate-certs can tell (no configMap or secret target,
// or a namespaceSelector it cannot read).
func ReadBundleTarget(node *yaml.RNode) (BundleTarget, bool) {
	t := BundleTarget{Name: node.GetName(), Keys: map[string][]string{}}
	var formats []string
	for _, f := range []string{"jks", "pkcs12"} {
		if k := kube.At(node, "spec", "target", "additionalFormats", f, "key"); k != nil && k.YNode().Kind == yaml.ScalarNode {
			formats = append(formats, k.YNode().Value)
		}
	}
	for _, k := range []struct{ field, kind string }{{"configMap", "ConfigMap"}, {"secret", "Secret"}} {
		target := kube.At(node, "spec", "target", k.field)
		if target == nil {
			continue
		}
		var keys []string
		if key := kube.At(target, "key"); key != nil && key.YNode().Kind == yaml.ScalarNode {
			keys = append(keys, key.YNode().Value)
		}
		t.Keys[k.kind] = append(keys, formats...)
	}
	if sel := kube.At(node, "spec", "target", "namespaceSelector"); sel != nil {
		s, err := kube.SelectorOf(sel)
		if err != nil {
			return t, false
		}
		t.Selector = &s
	}
	return t, len(t.Keys) > 0
}

// Kinds returns the kinds the Bundle writes, ConfigMap first.
func (t BundleTarget) Kinds() []string {
	var out []string
	for _, k := range []string{"ConfigMap", "Secret"} {
		if _, ok := t.Keys[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// Writes reports whether the Bundle writes key into objects of kind.
func (t BundleTarget) Writes(kind, key string) bool {
	return slices.Contains(t.Keys[kind], key)
}

// Selects reports whether the Bundle writes into a namespace with these
// labels.
func (t BundleTarget) Selects(namespaceLabels map[string]string) bool {
	return t.Selector == nil || t.Selector.Matches(namespaceLabels)
}

// BundleSource is a secret or configMap source of a Bundle: it names its
// object, or selects objects of the trust namespace by label.
type BundleSource struct {
	// Index is the source's position in spec.sources.
	Index int
	// Kind is Secret or ConfigMap; the object is in the trust namespace.
	// Name is the object's name; "" when the source selects.
	Kind, Name string
	// Selector is the label selector of a source that selects (nil for
	// one that names its object).
	Selector *kube.Selector
	// Key is the key read; AllKeys is includeAllKeys.
	Key     string
	AllKeys bool
}

// ReadBundleSources returns the secret and configMap sources of a Bundle
// that name an object or select by a label selector that decodes
// (SourceSelector), in order. A source with neither is left out: the
// render of the Bundle refuses it.
func ReadBundleSources(node *yaml.RNode) []BundleSource {
	seq := kube.At(node, "spec", "sources")
	if seq == nil || seq.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	var out []BundleSource
	for i, e := range seq.YNode().Content {
		for _, k := range []struct{ field, kind string }{{"secret", "Secret"}, {"configMap", "ConfigMap"}} {
			s := kube.At(yaml.NewRNode(e), k.field)
			if s == nil {
				continue
			}
			bs := BundleSource{Index: i, Kind: k.kind, Key: kube.ScalarAt(s, "key"), AllKeys: kube.TrueAt(s, "includeAllKeys")}
			if name := kube.ScalarAt(s, "name"); name != "" {
				bs.Name = name
			} else if sel, err := SourceSelector(s); err == nil {
				bs.Selector = &sel
			} else {
				continue
			}
			out = append(out, bs)
		}
	}
	return out
}

// SourceSelector decodes the label selector of a Bundle's secret or
// configMap source as the API server does (kube.SelectorOf: through JSON,
// whose field names are the selector's; a YAML decoding would see no
// matchLabels and select every object of the trust namespace). A source
// without a selector mapping is an error. trust-manager lists the
// objects a selector matches in its trust namespace only: it caches
// Secrets and ConfigMaps of that namespace alone.
func SourceSelector(source *yaml.RNode) (kube.Selector, error) {
	m := kube.At(source, "selector")
	if m == nil || m.YNode().Kind != yaml.MappingNode {
		return kube.Selector{}, errors.New("a source needs a name or a selector")
	}
	return kube.SelectorOf(m)
}
