package inventory

import (
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Certificates embedded in objects that no trust bundle reads or writes
// (ScanAll), where real repositories keep trust:
//
//   - the env values of a pod template's containers and init containers:
//     `linkerd inject` writes the mesh's trust anchors as PEM into every
//     proxy's LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS (the proxy is an init
//     container with restartPolicy Always where native sidecars are on),
//     keyed spec.template.spec.initContainers[name=linkerd-proxy].env[name=LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS].value;
//   - the Helm values of a Flux HelmRelease (spec.values) and of an Argo CD
//     Application's source or sources (helm.values, a YAML string;
//     helm.valuesObject; helm.parameters): Linkerd's
//     identityTrustAnchorsPEM, Istio's meshConfig.caCertificates[].pem. A
//     value is keyed by its values field and its path inside the values:
//     spec.values:identityTrustAnchorsPEM,
//     spec.source.helm.values:identity.issuer.tls.crtPEM.
//
// A list entry is named [name=NAME] when it is a mapping with a plain
// name, else by its index ([0]). A value is read when it holds PEM or is
// base64 of PEM; one that claims to be a certificate and does not parse is
// a problem, any other text none of the scan's business. Keys are never
// decoded: a private key's PEM in such a value holds no certificate.

// API groups and kinds of the objects that carry Helm values.
const (
	groupFlux   = "helm.toolkit.fluxcd.io"
	groupArgoCD = "argoproj.io"
)

// maxValuesDepth bounds the walk of Helm values: deeper nodes are not
// read (a hostile manifest may nest without end).
const maxValuesDepth = 64

// embeddedValues reads the values item embeds certificates in: a
// workload's env values, a HelmRelease's or an Application's Helm values.
func (s *scanner) embeddedValues(item *yaml.RNode, kind, group string) {
	if w, ok := policy.WorkloadKinds().At(item.GetApiVersion(), kind); ok {
		s.envValues(item, w)
		return
	}
	switch {
	case group == groupFlux && kind == "HelmRelease":
		if v := kube.At(item, "spec", "values"); v != nil {
			s.helmValues(lazyRef(item), "spec.values", v.YNode())
		}
	case group == groupArgoCD && kind == "Application":
		s.application(item)
	}
}

// envValues reads the env values of the containers and init containers of
// a workload's pod template (at its row's template path; a Pod's spec).
// Nothing is allocated for a template whose env holds no certificate.
func (s *scanner) envValues(item *yaml.RNode, w policy.WorkloadKind) {
	podSpec := kube.MapValue(templateOf(item, w), "spec")
	var ref func() kube.Ref
	for _, list := range []string{"initContainers", "containers"} {
		containers := kube.MapValue(podSpec, list)
		if containers == nil || containers.Kind != yaml.SequenceNode {
			continue
		}
		for i, c := range containers.Content {
			env := kube.MapValue(c, "env")
			if env == nil || env.Kind != yaml.SequenceNode {
				continue
			}
			for j, e := range env.Content {
				data := certText(scalar(e, "value"))
				if data == nil {
					continue
				}
				if ref == nil {
					ref = lazyRef(item)
				}
				field := kube.JoinPath(append(append([]string{}, w.Template...), "spec")) + "." + list + entry(c, i) + ".env" + entry(e, j) + ".value"
				s.pem(ref, spot{field: field, place: PlaceEnv, name: plainName(scalar(e, "name"))}, data, false)
			}
		}
	}
}

// templateOf returns the pod template of workload item of kind w (the
// item itself for a Pod), nil when it has none.
func templateOf(item *yaml.RNode, w policy.WorkloadKind) *yaml.Node {
	n := item.YNode()
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for _, k := range w.Template {
		if n = kube.MapValue(n, k); n == nil {
			return nil
		}
	}
	return n
}

// application reads the Helm values of an Argo CD Application's source
// and each of its sources.
func (s *scanner) application(item *yaml.RNode) {
	ref := lazyRef(item)
	if src := kube.At(item, "spec", "source"); src != nil {
		s.helmSource(ref, "spec.source", src.YNode())
	}
	if srcs := kube.At(item, "spec", "sources"); srcs != nil && srcs.YNode().Kind == yaml.SequenceNode {
		for i, src := range srcs.YNode().Content {
			s.helmSource(ref, "spec.sources"+entry(src, i), src)
		}
	}
}

// helmSource reads the Helm values of one Application source at field:
// helm.values (a YAML string), helm.valuesObject and helm.parameters.
func (s *scanner) helmSource(ref func() kube.Ref, field string, src *yaml.Node) {
	helm := kube.MapValue(src, "helm")
	if src.Kind != yaml.MappingNode || helm == nil || helm.Kind != yaml.MappingNode {
		return
	}
	field += ".helm"
	if v := kube.MapValue(helm, "values"); v != nil && v.Kind == yaml.ScalarNode && mayHoldCertificates(v.Value) {
		doc, err := yaml.Parse(v.Value)
		switch {
		case err == nil:
			s.helmValues(ref, field+".values", doc.YNode())
		case pki.HoldsCertificateData([]byte(v.Value)):
			first, _, _ := strings.Cut(kube.ScrubMessage(err.Error()), "\n")
			s.problem(ref(), field+".values", "Helm values hold certificate data but are not YAML: %v", first)
		}
	}
	if v := kube.MapValue(helm, "valuesObject"); v != nil {
		s.helmValues(ref, field+".valuesObject", v)
	}
	if ps := kube.MapValue(helm, "parameters"); ps != nil && ps.Kind == yaml.SequenceNode {
		for i, p := range ps.Content {
			s.helmParameter(ref, field+".parameters", p, i)
		}
	}
}

// helmParameter reads parameter p, the i-th of the list at field: its
// name is the value's path inside the values (Helm's --set).
func (s *scanner) helmParameter(ref func() kube.Ref, field string, p *yaml.Node, i int) {
	if p.Kind != yaml.MappingNode {
		return
	}
	data := certText(scalar(p, "value"))
	if data == nil {
		return
	}
	name := plainName(scalar(p, "name"))
	within, last := fmt.Sprintf("[%d]", i), ""
	if name != "" {
		within, last = name, name[strings.LastIndexByte(name, '.')+1:]
	}
	s.pem(ref, spot{field: field, within: within, place: PlaceHelmValue, name: last}, data, false)
}

// helmValues reads every string of the Helm values n, each keyed by field
// and its path inside the values.
func (s *scanner) helmValues(ref func() kube.Ref, field string, n *yaml.Node) {
	s.walkValues(ref, field, "", "", n, 0)
}

// walkValues reads node n of Helm values at path, named name (its
// mapping key).
func (s *scanner) walkValues(ref func() kube.Ref, field, path, name string, n *yaml.Node, depth int) {
	if depth > maxValuesDepth {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			s.walkValues(ref, field, path, name, c, depth+1)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			p := kube.Safe(key)
			if path != "" {
				p = path + "." + p
			}
			s.walkValues(ref, field, p, plainName(key), n.Content[i+1], depth+1)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			s.walkValues(ref, field, path+entry(c, i), name, c, depth+1)
		}
	case yaml.ScalarNode:
		if data := certText(n.Value); data != nil {
			s.pem(ref, spot{field: field, within: path, place: PlaceHelmValue, name: name}, data, false)
		}
	}
}

// certText returns the PEM a string value holds: the value itself when it
// holds a PEM header, the decoded value when it is base64 of PEM; nil
// otherwise. What is PEM armour, as written or base64-encoded, is pki's to
// say (CarriesPEM, LooksLikePEM): base64 of a bundle whose armour does not
// begin it - a comment line first, as curl's CA bundle has - is read too.
func certText(v string) []byte {
	if !pki.CarriesPEM(v) {
		return nil
	}
	if b := []byte(v); pki.LooksLikePEM(b) {
		return b
	}
	b, err := kube.DecodeBase64(strings.TrimSpace(v))
	if err != nil || !pki.LooksLikePEM(b) {
		return nil
	}
	return b
}

// mayHoldCertificates is a cheap test before parsing a string of Helm
// values: whether it carries PEM, as written or base64-encoded (what each
// value holds is certText's to say).
func mayHoldCertificates(v string) bool {
	return pki.CarriesPEM(v)
}

// entry names list entry n, the i-th: [name=NAME] for a mapping with a
// plain name, else [i].
func entry(n *yaml.Node, i int) string {
	if name := plainName(scalar(n, "name")); name != "" {
		return "[name=" + name + "]"
	}
	return fmt.Sprintf("[%d]", i)
}

// plainName returns name when a report may repeat it and a field path
// holds it unambiguously, else "".
func plainName(name string) string {
	if name == "" || !kube.Plain(name) || strings.ContainsAny(name, "[]\n") {
		return ""
	}
	return name
}

// scalar returns the scalar value of key in mapping n, "" when absent or
// not a scalar.
func scalar(n *yaml.Node, key string) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	v := kube.MapValue(n, key)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}
