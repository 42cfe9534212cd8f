package trustbundle

import (
	"fmt"
	"slices"
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
	// lists are the kind's lists of references, each a dotted field path
	// in which a step "name[]" stands for every element of list name.
	lists []string
	// defaultKind is a reference's kind when it names none ("" when
	// its kind is required).
	defaultKind string
	// crossNamespace is whether a reference may name a namespace (the
	// referencing object's own when it names none).
	crossNamespace bool
}

// caRefReaders are the kinds that read a CA at GatewayCAKey:
//   - Gateway API BackendTLSPolicy (v1alpha3, v1): spec.validation.caCertificateRefs,
//     LocalObjectReferences {group, kind, name} in the policy's namespace;
//   - Envoy Gateway ClientTrafficPolicy (v1alpha1):
//     spec.tls.clientValidation.caCertificateRefs, SecretObjectReferences
//     {group, kind (default Secret), name, namespace};
//   - Gateway API Gateway, its client certificate validation (GEP-91):
//     spec.tls.frontend.default.validation.caCertificateRefs and
//     spec.tls.frontend.perPort[].tls.validation.caCertificateRefs
//     (experimental channel in v1.4, standard from v1.5), and
//     spec.listeners[].tls.frontendValidation.caCertificateRefs
//     (experimental channel, v1.1 to v1.3); ObjectReferences {group,
//     kind (required), name, namespace (the Gateway's by default; another
//     needs a ReferenceGrant, which is not checked here)}.
var caRefReaders = []caRefReader{
	{GroupKind: kube.GroupKind{Group: "gateway.networking.k8s.io", Kind: "BackendTLSPolicy"},
		lists: []string{"spec.validation.caCertificateRefs"}},
	{GroupKind: kube.GroupKind{Group: "gateway.envoyproxy.io", Kind: "ClientTrafficPolicy"},
		lists: []string{"spec.tls.clientValidation.caCertificateRefs"}, defaultKind: string(kube.TargetSecret), crossNamespace: true},
	{GroupKind: kube.GroupKind{Group: "gateway.networking.k8s.io", Kind: "Gateway"},
		lists: []string{
			"spec.tls.frontend.default.validation.caCertificateRefs",
			"spec.tls.frontend.perPort[].tls.validation.caCertificateRefs",
			"spec.listeners[].tls.frontendValidation.caCertificateRefs",
		}, crossNamespace: true},
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
	var fields []string
	for _, path := range c.lists {
		eachList(node, "", strings.Split(path, "."), func(at string, refs []*yaml.Node) {
			for i, ref := range refs {
				if c.names(node, yaml.NewRNode(ref), key) {
					fields = append(fields, fmt.Sprintf("%s[%d]", at, i))
				}
			}
		})
	}
	return fields
}

// names reports whether ref, a reference of node, names the object key.
func (c caRefReader) names(node, ref *yaml.RNode, key kube.Key) bool {
	kind := kube.ScalarAt(ref, "kind")
	if kind == "" {
		kind = c.defaultKind
	}
	ns := node.GetNamespace()
	if c.crossNamespace && kube.ScalarAt(ref, "namespace") != "" {
		ns = kube.ScalarAt(ref, "namespace")
	}
	if ns == "" {
		ns = "default"
	}
	return kube.ScalarAt(ref, "group") == "" && kind == key.Kind && ns == key.Namespace && kube.ScalarAt(ref, "name") == key.Name
}

// eachList calls fn with the entries of every list at path under node
// and its field path, at (the field path of node) joined with path. A
// step "name[]" of path is every element of list name; a step that is
// absent or not of the expected shape yields nothing.
func eachList(node *yaml.RNode, at string, path []string, fn func(at string, entries []*yaml.Node)) {
	i := slices.IndexFunc(path, func(step string) bool { return strings.HasSuffix(step, "[]") })
	if i < 0 {
		if list := kube.At(node, path...); list != nil && list.YNode().Kind == yaml.SequenceNode {
			fn(joinField(at, path...), list.Content())
		}
		return
	}
	outer := append(slices.Clip(path[:i]), strings.TrimSuffix(path[i], "[]"))
	list := kube.At(node, outer...)
	if list == nil || list.YNode().Kind != yaml.SequenceNode {
		return
	}
	for j, e := range list.Content() {
		eachList(yaml.NewRNode(e), fmt.Sprintf("%s[%d]", joinField(at, outer...), j), path[i+1:], fn)
	}
}

// joinField joins the field path at with steps.
func joinField(at string, steps ...string) string {
	if at == "" {
		return kube.JoinPath(steps)
	}
	return kube.JoinPath(append([]string{at}, steps...))
}

// warnGatewayKey warns, for the target object key, about every reference
// of an object of caRefReaders that reads its CA from it while
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
