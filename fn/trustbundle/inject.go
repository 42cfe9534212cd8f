package trustbundle

import (
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Injection: the caBundle fields the API server itself reads when it calls
// an admission webhook, an aggregated API or a CRD conversion webhook.
// Each field is a target of its own (a slot): its value is its previous
// state, and the memory annotations of the object qualify their lines with
// the field's path when the object has several such fields.

// caBundleLimit says whose limit maxValueBytes is for a caBundle.
const caBundleLimit = "rotate-certs writes into one caBundle field (the whole object must stay under the API server's request limit of 1.5 MiB)"

// injection is one object to inject into, and which of its webhooks.
type injection struct {
	node *yaml.RNode
	// webhooks are the webhooks named by the policy; nil means all.
	webhooks []string
	// path is the policy field that names the object, "" when only its
	// annotation does.
	path string
}

// injections returns the objects bundle b injects into: those its inject
// list names, then those annotated with its name, each once. An object
// named by both gets every webhook (the annotation asks for all).
func (r *caBundles) injections() []injection {
	var out []injection
	at := map[*yaml.RNode]int{}
	for j, in := range r.bundle.Inject {
		field := fmt.Sprintf("%s.inject[%d]", r.path, j)
		row, _ := kube.InjectKinds().Lookup(in.Kind)
		node := r.env.Index.GetIn(row.Group, kube.Key{Kind: in.Kind, Name: in.Name})
		if node == nil {
			what := fmt.Sprintf("%s %s is not in the input", in.Kind, in.Name)
			if in.Optional {
				r.add(r.env.PolicyRef.Result(framework.Info, field, fmt.Sprintf("bundle %q: optional inject target %s; skipped", r.bundle.Name, what)))
				continue
			}
			r.errorf(r.env.PolicyRef, field, "bundle %q: inject target %s (mark it optional: true if it may be absent)", r.bundle.Name, what)
			continue
		}
		at[node] = len(out)
		out = append(out, injection{node: node, webhooks: in.Webhooks, path: field})
	}
	for _, row := range kube.InjectKinds().Rows() {
		for _, node := range r.env.Index.KindIn(row.Group, row.Kind) {
			if node.GetAnnotations(policy.InjectAnnotation)[policy.InjectAnnotation] != r.bundle.Name {
				continue
			}
			if i, ok := at[node]; ok {
				out[i].webhooks = nil
				continue
			}
			at[node] = len(out)
			out = append(out, injection{node: node})
		}
	}
	return out
}

// caBundles is the target kind of the caBundle fields a bundle injects
// into.
type caBundles struct{ *renderer }

// current returns what the policy's sources hold.
func (r *caBundles) current() ([]*x509.Certificate, bool) { return r.readSources(), true }

// slots yields every caBundle field of the bundle's injections.
func (r *caBundles) slots() iter.Seq[slot] {
	return func(yield func(slot) bool) {
		for _, in := range r.injections() {
			if !r.cainjectorOwns(in) {
				continue
			}
			slots, ok := r.caBundleSlots(in)
			if !ok {
				continue
			}
			for _, s := range slots {
				if !yield(s) {
					return
				}
			}
		}
	}
}

// caBundleSlots returns the caBundle fields of an injection, with what each
// holds. An object of an unknown apiVersion, a webhook the policy names
// that the object lacks, a caBundle that is not base64 or holds no
// certificate, and an object whose API would refuse a caBundle are errors
// naming the object and field.
func (r *caBundles) caBundleSlots(in injection) ([]slot, bool) {
	node := in.node
	ref := kube.RefOf(node)
	row, _ := kube.InjectKinds().Lookup(node.GetKind())
	// rotate-certs knows the caBundle fields of the version of each kind's
	// row (v1).
	if want := row.APIVersion(); node.GetApiVersion() != want {
		r.errorf(ref, "apiVersion", "bundle %q: %s has apiVersion %s; rotate-certs injects into %s only (the version every supported Kubernetes serves)",
			r.bundle.Name, ref, kube.Quote(node.GetApiVersion()), want)
		return nil, false
	}
	var fields []slot
	var ok bool
	switch {
	case row.Webhooks:
		fields, ok = r.webhookFields(ref, node, in)
	case row.Kind == policy.KindAPIService:
		fields, ok = r.apiServiceField(ref, node)
	default:
		fields, ok = r.conversionField(ref, node)
	}
	if !ok {
		return nil, false
	}
	for i := range fields {
		f := &fields[i]
		f.key, f.ref, f.node = kube.KeyOf(node), ref, node
		f.field += ".caBundle"
		f.memKey = f.field
		f.limit, f.limitWhy = maxValueBytes, caBundleLimit
		value, _, err := scalar(f.parent, "caBundle")
		if err != nil {
			r.errorf(ref, f.field, "bundle %q: %s %s %v", r.bundle.Name, ref, f.field, err)
			return nil, false
		}
		pem, err := kube.DecodeBase64(value)
		if err != nil {
			r.errorf(ref, f.field, "bundle %q: %s %s is not base64 (%v): a caBundle is the base64 of PEM certificates; fix or empty it so the bundle can be rebuilt",
				r.bundle.Name, ref, f.field, err)
			return nil, false
		}
		if f.previous, ok = r.readHeld(ref, f.field, pem); !ok {
			return nil, false
		}
	}
	return fields, true
}

// webhookFields returns webhooks[].clientConfig of a webhook
// configuration: every webhook, or the ones the policy names.
func (r *caBundles) webhookFields(ref kube.Ref, node *yaml.RNode, in injection) ([]slot, bool) {
	seq := node.Field("webhooks")
	var entries []*yaml.RNode
	if seq != nil && seq.Value != nil {
		y := seq.Value.YNode()
		if y.Kind != yaml.SequenceNode && !(y.Kind == yaml.ScalarNode && y.ShortTag() == yaml.NodeTagNull) {
			r.errorf(ref, "webhooks", "bundle %q: %s webhooks is a YAML %s, not a list", r.bundle.Name, ref, kube.NodeKindName(y.Kind))
			return nil, false
		}
		entries, _ = seq.Value.Elements()
	}
	byName := map[string]*yaml.RNode{}
	var names []string
	for i, e := range entries {
		name, found, err := "", false, error(nil)
		if e.YNode().Kind == yaml.MappingNode {
			name, found, err = scalar(e, "name")
		}
		if err != nil || !found || name == "" {
			r.errorf(ref, fmt.Sprintf("webhooks[%d].name", i), "bundle %q: %s webhooks[%d] has no name; the API server requires one", r.bundle.Name, ref, i)
			return nil, false
		}
		if !kube.ValidObjectName(name) {
			r.errorf(ref, fmt.Sprintf("webhooks[%d].name", i), "bundle %q: %s webhooks[%d] is named %s; the API server requires a lowercase DNS subdomain (\"a.example.com\")", r.bundle.Name, ref, i, kube.Quote(name))
			return nil, false
		}
		if _, dup := byName[name]; dup {
			r.errorf(ref, fmt.Sprintf("webhooks[%d].name", i), "bundle %q: %s has two webhooks named %s; the API server requires unique names", r.bundle.Name, ref, kube.Quote(name))
			return nil, false
		}
		byName[name] = e
		names = append(names, name)
	}
	selected := names
	if in.webhooks != nil {
		selected = in.webhooks
		for k, w := range in.webhooks {
			if byName[w] == nil {
				r.errorf(ref, "webhooks", "bundle %q: %s.webhooks[%d] names webhook %s, which %s does not have (its webhooks: %s)",
					r.bundle.Name, in.path, k, kube.Quote(w), ref, listOrNone(names))
				return nil, false
			}
		}
	}
	if len(selected) == 0 {
		r.add(ref.Result(framework.Warning, "webhooks", fmt.Sprintf("bundle %q: %s has no webhooks; nothing to inject", r.bundle.Name, ref)))
		return nil, true
	}
	var out []slot
	for _, name := range selected {
		field := "webhooks[name=" + kube.Safe(name) + "].clientConfig"
		cc, err := mapping(byName[name], "clientConfig")
		if err != nil || cc == nil {
			r.errorf(ref, field, "bundle %q: %s webhook %s has no clientConfig map; the API server needs one (a service or url) to call it", r.bundle.Name, ref, kube.Quote(name))
			return nil, false
		}
		out = append(out, slot{field: field, parent: cc})
	}
	return out, true
}

// apiServiceField returns an APIService's spec. A local APIService (no
// spec.service) is served by the API server itself and takes no caBundle;
// insecureSkipTLSVerify: true (however YAML spells it for kubectl: True,
// yes, on) and a caBundle together are refused.
func (r *caBundles) apiServiceField(ref kube.Ref, node *yaml.RNode) ([]slot, bool) {
	spec, err := mapping(node, "spec")
	if err != nil || spec == nil {
		r.errorf(ref, "spec", "bundle %q: %s has no spec map", r.bundle.Name, ref)
		return nil, false
	}
	if svc, err := mapping(spec, "service"); err != nil || svc == nil {
		r.errorf(ref, "spec.service", "bundle %q: %s has no spec.service: a local APIService is served by the API server itself and the API refuses a caBundle on it; remove it from the bundle's inject list (or its %s annotation)",
			r.bundle.Name, ref, policy.InjectAnnotation)
		return nil, false
	}
	if insecure, _ := kube.BoolAt(spec, "insecureSkipTLSVerify"); insecure {
		r.errorf(ref, "spec.insecureSkipTLSVerify", "bundle %q: %s sets insecureSkipTLSVerify: true, which the API refuses together with a caBundle; remove it so the API server verifies the service against the bundle",
			r.bundle.Name, ref)
		return nil, false
	}
	return []slot{{field: "spec", parent: spec}}, true
}

// conversionField returns a CustomResourceDefinition's
// spec.conversion.webhook.clientConfig. The API calls the conversion
// webhook (and accepts its caBundle) only with strategy Webhook.
func (r *caBundles) conversionField(ref kube.Ref, node *yaml.RNode) ([]slot, bool) {
	conv, err := node.Pipe(yaml.Lookup("spec", "conversion"))
	if err != nil || conv == nil || conv.YNode().Kind != yaml.MappingNode {
		r.errorf(ref, "spec.conversion", "bundle %q: %s has no spec.conversion: its versions are not converted by a webhook, so no caBundle is read; remove it from the bundle's inject list (or its %s annotation)",
			r.bundle.Name, ref, policy.InjectAnnotation)
		return nil, false
	}
	if s, _, _ := scalar(conv, "strategy"); s != "Webhook" {
		r.errorf(ref, "spec.conversion.strategy", "bundle %q: %s has conversion strategy %s, not Webhook: the API server calls no conversion webhook and refuses spec.conversion.webhook; remove it from the bundle's inject list (or its %s annotation)",
			r.bundle.Name, ref, kube.Quote(s), policy.InjectAnnotation)
		return nil, false
	}
	cc, err := conv.Pipe(yaml.Lookup("webhook", "clientConfig"))
	if err != nil || cc == nil || cc.YNode().Kind != yaml.MappingNode {
		r.errorf(ref, "spec.conversion.webhook.clientConfig", "bundle %q: %s has strategy Webhook but no spec.conversion.webhook.clientConfig map; the API server needs one (a service or url) to call it",
			r.bundle.Name, ref)
		return nil, false
	}
	return []slot{{field: "spec.conversion.webhook.clientConfig", parent: cc}}, true
}

// write writes the bundle into one caBundle field.
func (r *caBundles) write(s slot, t *Target, pem []byte) (bool, bool) {
	// target.metadata is for the bundle's target objects; an object it
	// injects into is the user's, and gets only the memory annotations.
	t.metadata = nil
	changed := false
	if cur, _, _ := scalar(s.parent, "caBundle"); !sameBytes(cur, pem) {
		var err error
		if changed, err = setString(s.parent, "caBundle", base64.StdEncoding.EncodeToString(pem)); err != nil {
			r.errorf(s.ref, s.field, "bundle %q: %s: set %s: %v", r.bundle.Name, s.ref, s.field, err)
			return false, false
		}
	}
	return changed, true
}

// sameBytes reports whether caBundle value decodes to exactly pem: an
// unchanged bundle leaves the field as it was written, line breaks and all.
func sameBytes(value string, pem []byte) bool {
	b, err := kube.DecodeBase64(value)
	return err == nil && string(b) == string(pem)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// CheckInjectAnnotations returns an error for every object annotated
// rotate-certs.dev/inject-ca-from with a bundle the policy does not
// define: its caBundle would silently miss every rotation.
func CheckInjectAnnotations(p *policy.RotationPolicy, index *kube.Index) framework.Results {
	names := map[string]bool{}
	for _, b := range p.Spec.TrustBundles {
		names[b.Name] = true
	}
	var out framework.Results
	for _, row := range kube.InjectKinds().Rows() {
		for _, node := range index.KindIn(row.Group, row.Kind) {
			v, ok := node.GetAnnotations(policy.InjectAnnotation)[policy.InjectAnnotation]
			if !ok || names[v] {
				continue
			}
			ref := kube.RefOf(node)
			out = append(out, ref.Result(framework.Error, kube.AnnotationField(policy.InjectAnnotation), fmt.Sprintf(
				"%s asks for the CAs of bundle %s, which the policy does not define (its bundles: %s); without a bundle its caBundle misses every rotation - fix the annotation or add the bundle",
				ref, kube.Quote(v), listOrNone(slices.Sorted(maps.Keys(names))))))
		}
	}
	return out
}
