package trustbundle

import (
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// GatewayCAKey is the key Gateway API and Envoy Gateway read a referenced
// CA from, in a ConfigMap or a Secret.
const GatewayCAKey = "ca.crt"

// caRefReader is a kind whose CA certificate references read key
// GatewayCAKey of a Secret or ConfigMap.
type caRefReader struct {
	kube.GroupKind
	// path is the list of references in the object.
	path []string
	// defaultKind is a reference's kind when it names none ("" when
	// its kind is required).
	defaultKind string
	// crossNamespace is whether a reference may name a namespace.
	crossNamespace bool
}

// caRefReaders are the kinds that read a CA at GatewayCAKey:
//   - Gateway API BackendTLSPolicy (v1alpha3, v1): spec.validation.caCertificateRefs,
//     LocalObjectReferences {group, kind, name} in the policy's namespace;
//   - Envoy Gateway ClientTrafficPolicy (v1alpha1):
//     spec.tls.clientValidation.caCertificateRefs, SecretObjectReferences
//     {group, kind (default Secret), name, namespace}.
var caRefReaders = []caRefReader{
	{GroupKind: kube.GroupKind{Group: "gateway.networking.k8s.io", Kind: "BackendTLSPolicy"},
		path: []string{"spec", "validation", "caCertificateRefs"}},
	{GroupKind: kube.GroupKind{Group: "gateway.envoyproxy.io", Kind: "ClientTrafficPolicy"},
		path: []string{"spec", "tls", "clientValidation", "caCertificateRefs"}, defaultKind: string(kube.TargetSecret), crossNamespace: true},
}

// caRefReaderKinds returns the kinds of caRefReaders, for Reads.
func caRefReaderKinds() []kube.GroupKind {
	out := make([]kube.GroupKind, 0, len(caRefReaders))
	for _, c := range caRefReaders {
		out = append(out, c.GroupKind)
	}
	return out
}

// refsTo yields the field of every reference of node to the object key.
func (c caRefReader) refsTo(node *yaml.RNode, key kube.Key) []string {
	list := kube.At(node, c.path...)
	if list == nil || list.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	var fields []string
	for i, ref := range list.Content() {
		r := yaml.NewRNode(ref)
		kind := kube.ScalarAt(r, "kind")
		if kind == "" {
			kind = c.defaultKind
		}
		ns := node.GetNamespace()
		if c.crossNamespace && kube.ScalarAt(r, "namespace") != "" {
			ns = kube.ScalarAt(r, "namespace")
		}
		if ns == "" {
			ns = "default"
		}
		if kube.ScalarAt(r, "group") != "" || kind != key.Kind || ns != key.Namespace || kube.ScalarAt(r, "name") != key.Name {
			continue
		}
		fields = append(fields, fmt.Sprintf("%s[%d]", strings.Join(c.path, "."), i))
	}
	return fields
}

// warnGatewayKey warns, for the target object key, about every
// BackendTLSPolicy or ClientTrafficPolicy that reads its CA from it while
// target.key is not ca.crt: the gateway reads only ca.crt, so the overlap
// would be written where nothing reads it while a stale ca.crt stays in
// use.
func (r *fanOut) warnGatewayKey(key kube.Key) {
	t := r.bundle.Target
	if t.Key == GatewayCAKey {
		return
	}
	for _, c := range caRefReaders {
		for _, node := range r.env.Index.KindIn(c.Group, c.Kind) {
			for _, field := range c.refsTo(node, key) {
				ref := kube.RefOf(node)
				r.add(ref.Result(framework.Warning, field, fmt.Sprintf(
					"bundle %q: %s %s reads its CA from key %s of %s, but this bundle writes key %s, which the gateway never reads: the overlap is not trusted and a stale %s stays in use - set target.key: %s",
					r.bundle.Name, ref, field, GatewayCAKey, key, kube.Safe(t.Key), GatewayCAKey, GatewayCAKey)))
			}
		}
	}
}
