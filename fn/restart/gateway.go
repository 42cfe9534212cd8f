package restart

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// GatewayCAKey is the key Gateway API and Envoy Gateway read a referenced
// CA from, in a ConfigMap or a Secret.
const GatewayCAKey = "ca.crt"

// caRefReader is a kind whose CA certificate references name a Secret, a
// ConfigMap or a ClusterTrustBundle: a reader row, as a workload kind's
// pod template is. Its controller watches what it names and follows each
// update (ViaCARef): it never reads once. Envoy Gateway, whose rows these
// are besides Gateway API's, serves the CAs to its proxies over xDS
// (secrets of its SDS), which Envoy takes without a restart: a new CA in
// the object is in use once the controller has reconciled it, the old one
// no longer - so a change that replaces the CA under a certificate still
// presented breaks at once, and an overlap (both CAs) does not.
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

// caRefReaders are the kinds that read a CA through caCertificateRefs,
// from key GatewayCAKey of a Secret or ConfigMap or from a
// ClusterTrustBundle's spec.trustBundle:
//   - Gateway API BackendTLSPolicy (v1alpha3, v1): spec.validation.caCertificateRefs,
//     LocalObjectReferences {group, kind, name} in the policy's namespace;
//   - Envoy Gateway ClientTrafficPolicy (v1alpha1):
//     spec.tls.clientValidation.caCertificateRefs, SecretObjectReferences
//     {group, kind (default Secret), name, namespace};
//   - Envoy Gateway Backend (v1alpha1): spec.tls.caCertificateRefs, the
//     CAs the gateway validates the backend's serving certificate with,
//     Gateway API LocalObjectReferences {group, kind, name} in the
//     Backend's namespace (api/v1alpha1/backend_types.go of
//     envoyproxy/gateway at d32f282; its provider indexes the ConfigMaps,
//     Secrets and ClusterTrustBundles they name and reconciles on each
//     change of them, internal/provider/kubernetes/indexers.go);
//   - Gateway API Gateway, its client certificate validation (GEP-91):
//     spec.tls.frontend.default.validation.caCertificateRefs and
//     spec.tls.frontend.perPort[].tls.validation.caCertificateRefs
//     (experimental channel in v1.4, standard from v1.5), and
//     spec.listeners[].tls.frontendValidation.caCertificateRefs
//     (experimental channel, v1.1 to v1.3); ObjectReferences {group,
//     kind (required), name, namespace (the Gateway's by default; another
//     needs a ReferenceGrant, which is not checked here)}.
//
// Envoy Gateway resolves a reference of kind ClusterTrustBundle (group ""
// in its own test manifests, test/e2e/testdata/client-mtls-trustbundle.yaml
// and backend-tls-clustertrustbundle.yaml of envoyproxy/gateway at
// d32f282) to the cluster-scoped object of that name.
var caRefReaders = []caRefReader{
	{GroupKind: kube.GroupKind{Group: "gateway.networking.k8s.io", Kind: "BackendTLSPolicy"},
		lists: []string{"spec.validation.caCertificateRefs"}},
	{GroupKind: kube.GroupKind{Group: "gateway.envoyproxy.io", Kind: "ClientTrafficPolicy"},
		lists: []string{"spec.tls.clientValidation.caCertificateRefs"}, defaultKind: kindSecret, crossNamespace: true},
	{GroupKind: kube.GroupKind{Group: "gateway.envoyproxy.io", Kind: "Backend"},
		lists: []string{"spec.tls.caCertificateRefs"}},
	{GroupKind: kube.GroupKind{Group: "gateway.networking.k8s.io", Kind: "Gateway"},
		lists: []string{
			"spec.tls.frontend.default.validation.caCertificateRefs",
			"spec.tls.frontend.perPort[].tls.validation.caCertificateRefs",
			"spec.listeners[].tls.frontendValidation.caCertificateRefs",
		}, crossNamespace: true},
}

// CARefReaderKinds returns the kinds that read a CA through
// caCertificateRefs, for a step's declaration of what it reads.
func CARefReaderKinds() []kube.GroupKind {
	out := make([]kube.GroupKind, 0, len(caRefReaders))
	for _, c := range caRefReaders {
		out = append(out, c.GroupKind)
	}
	return out
}

// caRefReaderOf returns the row of node's kind, if it has one.
func caRefReaderOf(node *yaml.RNode) (caRefReader, bool) {
	group := kube.GroupOf(node.GetApiVersion())
	i := slices.IndexFunc(caRefReaders, func(c caRefReader) bool { return c.Group == group && c.Kind == node.GetKind() })
	if i < 0 {
		return caRefReader{}, false
	}
	return caRefReaders[i], true
}

// caRef is one reference of a caRefReader: the object it names, in the
// namespace the reference names ("" for a ClusterTrustBundle, or when the
// reference names none: the referencing object's, addCARefs).
type caRef struct {
	object    Object
	namespace string
	field     string
}

// refs returns every reference of node (of kind c) to a Secret, ConfigMap
// or ClusterTrustBundle.
func (c caRefReader) refs(node *yaml.RNode) []caRef {
	var out []caRef
	for _, path := range c.lists {
		eachList(node, "", strings.Split(path, "."), func(at string, entries []*yaml.Node) {
			for i, e := range entries {
				if r, ok := c.ref(yaml.NewRNode(e)); ok {
					r.field = fmt.Sprintf("%s[%d]", at, i)
					out = append(out, r)
				}
			}
		})
	}
	return out
}

// ref reads one reference; ok is false for one that names no
// object rotate-certs writes trust into (another group, another kind).
func (c caRefReader) ref(ref *yaml.RNode) (caRef, bool) {
	if ref.YNode().Kind != yaml.MappingNode {
		return caRef{}, false
	}
	kind, group, name := kube.ScalarAt(ref, "kind"), kube.ScalarAt(ref, "group"), kube.ScalarAt(ref, "name")
	if kind == "" {
		kind = c.defaultKind
	}
	if name == "" {
		return caRef{}, false
	}
	switch {
	case kind == kindClusterTrustBundle && (group == "" || group == groupCertificates):
		return caRef{object: Object{kind: kind, name: name}}, true
	case (kind == kindSecret || kind == kindConfigMap) && group == "":
		// No namespace named: the reader's own (addCARefs, by the
		// namespace rule).
		ns := ""
		if c.crossNamespace {
			ns = kube.ScalarAt(ref, "namespace")
		}
		return caRef{object: Object{kind: kind, name: name}, namespace: ns}, true
	}
	return caRef{}, false
}

// groupCertificates is the API group of ClusterTrustBundles.
const groupCertificates = "certificates.k8s.io"

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
