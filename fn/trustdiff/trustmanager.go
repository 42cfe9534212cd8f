package trustdiff

import (
	"crypto/x509"
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// What a trust-manager Bundle gives the workloads that read it.
// trust-manager unions a Bundle's sources - its inLine PEM, and the keys
// of the Secrets and ConfigMaps of its trust namespace that its secret
// and configMap sources name or select - into an object named like the
// Bundle in each namespace it selects. Those objects are not in git; the
// Bundle is: it is one trust object, field spec.sources, holding the CAs
// of every source the tree holds, read by the workloads that read an
// object of the Bundle's name. A root replaced in a source Secret is a
// change of the Bundle's trust, with its breaks, whether or not a policy
// renders the Bundle. The default CA package (useDefaultCAs) is
// trust-manager's own and not in the tree.

// bundleField is the field of a trust-manager Bundle's trust object.
const bundleField = "spec.sources"

// sourceValue is one value of a Secret or ConfigMap that may be a Bundle's
// source: its object, field (valueField's) and CAs.
type sourceValue struct {
	res   Resource
	node  *yaml.RNode
	field string
	cas   []*x509.Certificate
}

// bundleTrust makes each trust-manager Bundle of the tree one trust
// object (bundleField) in place of its inLine values: their CAs and whys,
// and the CAs of the sources it names, each why source naming the value
// that holds it unless a policy's render says otherwise.
func (b *builder) bundleTrust(certs []found) {
	values := b.sourceValues(certs)
	unions := map[string]*TrustObject{}
	var order []*TrustObject
	var items []*yaml.RNode
	for _, item := range b.in.Items {
		if !certmanager.IsBundle(item) {
			continue
		}
		o := &TrustObject{Resource: b.resource(kube.RefOf(item)), Field: bundleField, memory: memoryOf(item), pkg: b.pkg[item]}
		if _, dup := unions[o.Resource.id()]; dup {
			continue
		}
		o.Package = b.packageName(o.pkg)
		unions[o.Resource.id()] = o
		order, items = append(order, o), append(items, item)
		b.bundleSources(o, item, values)
	}
	if len(order) == 0 {
		return
	}
	b.model.Trust = mergeBundles(b.model.Trust, unions, order)
	for i, o := range order {
		b.trustNodes[o] = items[i] // its readers: readers.go
	}
}

// mergeBundles returns trust with each Bundle's inLine values folded into
// its union (at the first inLine's place; a Bundle without one at the
// end), the unions that hold no CA left out.
func mergeBundles(trust []*TrustObject, unions map[string]*TrustObject, order []*TrustObject) []*TrustObject {
	out := make([]*TrustObject, 0, len(trust)+len(order))
	placed := map[*TrustObject]bool{}
	for _, t := range trust {
		u := unions[t.Resource.id()]
		if u == nil {
			out = append(out, t)
			continue
		}
		u.cas = append(t.cas, u.cas...)
		for _, c := range t.cas { // its own data holds it
			delete(u.derived, sha(c))
		}
		for s, r := range t.reasons { // a policy's render's why wins
			if u.reasons == nil {
				u.reasons = map[string]reason{}
			}
			u.reasons[s] = r
		}
		if t.Bundle != "" {
			u.Bundle, u.domain = t.Bundle, t.domain
		}
		if !placed[u] {
			placed[u] = true
			out = append(out, u)
		}
	}
	for _, u := range order {
		if !placed[u] {
			out = append(out, u)
		}
	}
	kept := out[:0]
	for _, t := range out {
		if len(t.cas) > 0 {
			kept = append(kept, t)
		}
	}
	return kept
}

// bundleSources adds to o, Bundle item's union, the CAs of the Secret and
// ConfigMap values its sources read, each explained as source by the
// value: in its trust namespace (a policy's trustNamespace for the
// Bundle, else trust-manager's default); an object a source names that
// the trust namespace lacks is matched in any namespace (trust-manager
// may be installed with another).
func (b *builder) bundleSources(o *TrustObject, item *yaml.RNode, values map[string][]*sourceValue) {
	ns := b.trustNS[o.pkg+"\x00"+item.GetName()]
	if ns == "" {
		ns = policy.DefaultTrustNamespace
	}
	for _, src := range certmanager.ReadBundleSources(item) {
		vs := values[src.Kind+"\x00"+ns]
		if src.Name != "" && !slices.ContainsFunc(vs, func(v *sourceValue) bool { return v.res.Name == src.Name }) {
			vs = values[src.Kind]
		}
		for _, v := range vs {
			if !reads(src, v) {
				continue
			}
			o.cas = append(o.cas, v.cas...)
			if o.reasons == nil {
				o.reasons, o.derived = map[string]reason{}, map[string]bool{}
			}
			for _, c := range v.cas {
				o.derived[sha(c)] = true
				if _, ok := o.reasons[sha(c)]; !ok {
					o.reasons[sha(c)] = reason{why: WhySource, source: v.res.String() + " " + v.field}
				}
			}
		}
	}
}

// reads reports whether Bundle source src reads value v (of its kind and
// namespace): the object it names or selects, at its key or any key.
func reads(src certmanager.BundleSource, v *sourceValue) bool {
	switch {
	case src.Name != "" && v.res.Name != src.Name:
		return false
	case src.Name == "" && (src.Selector == nil || v.node == nil || !src.Selector.Matches(v.node.GetLabels())):
		return false
	}
	return src.AllKeys || src.Key != "" && v.field == "data."+src.Key
}

// sourceValues indexes the values of Secrets and ConfigMaps that hold
// CAs, in tree order, by kind and namespace and by kind alone.
func (b *builder) sourceValues(certs []found) map[string][]*sourceValue {
	out := map[string][]*sourceValue{}
	byID := map[string]*sourceValue{}
	for _, f := range certs {
		if (f.Ref.Kind != "Secret" && f.Ref.Kind != "ConfigMap") || f.Within != "" || !pki.IsCA(f.Cert) {
			continue
		}
		res := b.resource(f.Ref)
		field := valueField(res, f.Field)
		v, ok := byID[res.id()+"\x00"+field]
		if !ok {
			v = &sourceValue{res: res, node: b.nodes[f.Ref], field: field}
			byID[res.id()+"\x00"+field] = v
			out[f.Ref.Kind+"\x00"+f.Ref.Namespace] = append(out[f.Ref.Kind+"\x00"+f.Ref.Namespace], v)
			out[f.Ref.Kind] = append(out[f.Ref.Kind], v)
		}
		v.cas = append(v.cas, f.Cert)
	}
	return out
}
