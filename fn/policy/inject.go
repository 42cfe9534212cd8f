package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// Kinds whose caBundle fields a bundle can be injected into (the rows of
// kube.InjectKinds, by name), and the annotation that asks for it from the
// object itself.
const (
	kindMutatingWebhookConfiguration   = "MutatingWebhookConfiguration"
	kindValidatingWebhookConfiguration = "ValidatingWebhookConfiguration"
	KindAPIService                     = "APIService"
	KindCustomResourceDefinition       = "CustomResourceDefinition"

	// InjectAnnotation on one of those objects names the bundle to inject
	// into every caBundle field of the object, as if the bundle listed it
	// in inject.
	InjectAnnotation = "rotate-certs.dev/inject-ca-from"
)

// Inject names one object whose caBundle fields receive the bundle: every
// webhooks[].clientConfig.caBundle of a webhook configuration (or only
// those of Webhooks), an APIService's spec.caBundle, a
// CustomResourceDefinition's spec.conversion.webhook.clientConfig.caBundle.
type Inject struct {
	// Kind is one of kube.InjectKinds.
	Kind string `json:"kind"`
	// Name of the (cluster-scoped) object.
	Name string `json:"name"`
	// Webhooks limits a webhook configuration to these webhooks, by name;
	// empty means every webhook of the object.
	Webhooks []string `json:"webhooks,omitempty"`
	// Optional: an object that is not in the input is an info result
	// instead of an error.
	Optional bool `json:"optional,omitempty"`
}

// validateInject checks the inject list of bundle b at path.
func (b *TrustBundle) validateInject(path string) FieldErrors {
	var errs FieldErrors
	seen := map[string]int{}
	for i, in := range b.Inject {
		p := fmt.Sprintf("%s.inject[%d]", path, i)
		row, ok := kube.InjectKinds().Lookup(in.Kind)
		if !ok {
			errs.add(p+".kind", "%s is not one of %s", kube.Quote(in.Kind), strings.Join(slices.Sorted(slices.Values(kube.InjectKinds().Names())), ", "))
		}
		errs.checkObjectName(p+".name", kube.Safe(in.Kind), in.Name)
		if len(in.Webhooks) > 0 && !row.Webhooks {
			errs.add(p+".webhooks", "applies only to a MutatingWebhookConfiguration or ValidatingWebhookConfiguration")
		}
		names := map[string]int{}
		for j, w := range in.Webhooks {
			wp := fmt.Sprintf("%s.webhooks[%d]", p, j)
			errs.checkObjectName(wp, "webhook", w) // the API server requires a DNS subdomain ("a.example.com")
			if first, dup := names[w]; dup {
				errs.add(wp, "webhook %s is listed twice (also %s.webhooks[%d])", kube.Quote(w), p, first)
			}
			names[w] = j
		}
		id := in.Kind + " " + in.Name
		if first, dup := seen[id]; dup && in.Name != "" {
			errs.add(p, "%s is listed twice (also %s.inject[%d]); list its webhooks in one entry", id, path, first)
		}
		seen[id] = i
	}
	return errs
}

// validateInjectOverlap reports two bundles that inject into one field:
// each render would overwrite the other's certificates.
func validateInjectOverlap(bundles []TrustBundle) FieldErrors {
	var errs FieldErrors
	type owner struct {
		bundle   int
		path     string
		webhooks map[string]bool // nil: every webhook
	}
	owners := map[string]owner{}
	for i := range bundles {
		for j, in := range bundles[i].Inject {
			p := fmt.Sprintf("spec.trustBundles[%d].inject[%d]", i, j)
			id := in.Kind + " " + in.Name
			var mine map[string]bool
			if len(in.Webhooks) > 0 {
				mine = map[string]bool{}
				for _, w := range in.Webhooks {
					mine[w] = true
				}
			}
			other, ok := owners[id]
			if !ok {
				owners[id] = owner{i, p, mine}
				continue
			}
			if other.bundle == i {
				continue // one bundle listing an object twice: validateInject
			}
			if shared := sharedWebhooks(other.webhooks, mine); shared != "" {
				errs.add(p, "injects into %s %s, which %s also injects into: each render would overwrite the other's CAs - give each bundle its own webhooks", id, shared, other.path)
			}
		}
	}
	return errs
}

// sharedWebhooks describes the webhooks both sets name ("" when none); a
// nil set is every webhook of the object.
func sharedWebhooks(a, b map[string]bool) string {
	switch {
	case a == nil && b == nil:
		return "(every caBundle field)"
	case a == nil || b == nil:
		some := a
		if a == nil {
			some = b
		}
		return "(webhooks " + strings.Join(slices.Sorted(maps.Keys(some)), ", ") + ")"
	}
	var both []string
	for _, w := range slices.Sorted(maps.Keys(a)) {
		if b[w] {
			both = append(both, w)
		}
	}
	if len(both) == 0 {
		return ""
	}
	return "(webhooks " + strings.Join(both, ", ") + ")"
}
