package policy

import (
	"fmt"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// validate checks a defaulted policy and returns every problem found.
func (p *RotationPolicy) validate() FieldErrors {
	var errs FieldErrors
	if p.Spec.Now != "" {
		if _, err := time.Parse(time.RFC3339, p.Spec.Now); err != nil {
			errs.add("spec.now", "%s is not an RFC 3339 time such as 2026-11-22T00:00:00Z", kube.Quote(p.Spec.Now))
		}
	}
	warn, fail := p.Spec.Expiry.WarnWithin.Duration, p.Spec.Expiry.FailWithin.Duration
	if warn < 0 {
		errs.add("spec.expiry.warnWithin", "must not be negative")
	}
	if fail < 0 {
		errs.add("spec.expiry.failWithin", "must not be negative")
	}
	if fail > warn {
		errs.add("spec.expiry.failWithin", "%s is longer than warnWithin %s; the critical threshold must come after the warning", fail, warn)
	}

	errs = append(errs, p.Spec.Alerts.validate("spec.alerts")...)
	names := map[string]int{}
	targets := map[string]string{}
	for i := range p.Spec.TrustBundles {
		b := &p.Spec.TrustBundles[i]
		path := fmt.Sprintf("spec.trustBundles[%d]", i)
		if j, dup := names[b.Name]; dup && b.Name != "" {
			errs.add(path+".name", "duplicate bundle name %s (also spec.trustBundles[%d])", kube.Quote(b.Name), j)
		}
		names[b.Name] = i
		errs = append(errs, b.validate(path)...)
		if !b.Target.namespaced() && b.HasObject() {
			k := fmt.Sprintf("%s %s", b.Target.Kind, b.Target.Name)
			if other, dup := targets[k]; dup {
				errs.add(path+".target", "writes %s, which %s also writes", k, other)
			}
			targets[k] = path
		}
		listed := map[string]int{}
		for j, ns := range b.Target.Namespaces {
			if !errs.checkNamespace(fmt.Sprintf("%s.target.namespaces[%d]", path, j), ns) {
				continue
			}
			if first, dup := listed[ns]; dup {
				errs.add(fmt.Sprintf("%s.target.namespaces[%d]", path, j), "namespace %q is listed twice (also %s.target.namespaces[%d])", ns, path, first)
				continue
			}
			listed[ns] = j
			k := fmt.Sprintf("%s %s/%s key %s", kube.Safe(string(b.Target.Kind)), ns, kube.Safe(b.Target.Name), kube.Safe(b.Target.Key))
			if other, dup := targets[k]; dup {
				errs.add(path+".target", "writes %s, which %s also writes", k, other)
			}
			targets[k] = path
		}
	}
	errs = append(errs, validateFormatKeys(p.Spec.TrustBundles)...)
	errs = append(errs, validateInjectOverlap(p.Spec.TrustBundles)...)
	errs = append(errs, validateClusterAPI(p.Spec.ClusterAPI)...)
	return errs
}

// validate checks one source at path sp of a bundle whose target is t:
// exactly one of secret, configMap and inline, a valid reference, and not
// the bundle's own target.
func (s Source) validate(sp string, t Target) FieldErrors {
	var errs FieldErrors
	set := 0
	for _, ok := range []bool{s.Secret != nil, s.ConfigMap != nil, s.Inline != ""} {
		if ok {
			set++
		}
	}
	if set != 1 {
		errs.add(sp, "set exactly one of secret, configMap, inline")
		return errs
	}
	ref := s.Ref()
	if ref == nil {
		return errs
	}
	rp := sp + "." + s.field()
	ok := errs.checkObjectName(rp+".name", s.Kind(), ref.Name)
	ok = errs.checkNamespace(rp+".namespace", ref.Namespace) && ok
	ok = errs.checkDataKey(rp+".key", ref.Key) && ok
	if ok && kube.TargetKind(s.Kind()) == t.Kind && ref.Name == t.Name && ref.Key == t.Key {
		for _, ns := range t.Namespaces {
			if ns == ref.Namespace {
				errs.add(sp, "is the bundle's own target (%s %s/%s key %s): a bundle cannot read what it writes", kube.Safe(string(t.Kind)), ns, t.Name, t.Key)
			}
		}
	}
	return errs
}

// validateTarget checks the bundle's target: none (the bundle only
// injects), a cluster-scoped kind, or a namespaced one.
func (b *TrustBundle) validateTarget(path string) FieldErrors {
	return b.validateTargetIn(path, kube.TargetKinds())
}

// validateTargetIn checks the bundle's target against the target-kind
// table kinds.
func (b *TrustBundle) validateTargetIn(path string, kinds kube.TargetTable) FieldErrors {
	var errs FieldErrors
	t := b.Target
	d, known := kinds.Lookup(t.Kind)
	switch {
	case t.IsZero():
		// No target object: the bundle only injects (listed here, or
		// named by objects' inject-ca-from annotation).
	case !known:
		errs.add(path+".target.kind", "%s is not one of %s", kube.Quote(string(t.Kind)), strings.Join(kinds.Names(), ", "))
	case !d.Namespaced:
		if t.Name == "" {
			errs.add(path+".target.name", "required") // the kind's own name rule is in validateClusterScoped
		}
		errs = append(errs, t.validateClusterScoped(path+".target", len(b.Sources), d, kinds)...)
		errs = append(errs, t.Metadata.validate(path+".target.metadata")...)
	default:
		errs = append(errs, b.validateNamespacedTarget(path, d, kinds)...)
	}
	return errs
}

func (b *TrustBundle) validate(path string) FieldErrors {
	var errs FieldErrors
	switch {
	case b.Name == "":
		errs.add(path+".name", "required")
	case !kube.ValidObjectName(b.Name) || len(b.Name) > 63:
		errs.add(path+".name", "%s must be a lowercase DNS name (a-z, 0-9, '-', '.'; at most 63 characters)", kube.Quote(b.Name))
	}
	if b.Mode != ModeBundle && b.Mode != ModeCopy {
		errs.add(path+".mode", "%s is not one of %s, %s", kube.Quote(b.Mode), ModeBundle, ModeCopy)
	}
	if b.Domain != "" && (!kube.ValidObjectName(b.Domain) || len(b.Domain) > 63) {
		errs.add(path+".domain", "%s must be a lowercase DNS name (a-z, 0-9, '-', '.'; at most 63 characters)", kube.Quote(b.Domain))
	}
	t := b.Target
	if d, _ := kube.TargetKinds().Lookup(t.Kind); len(b.Sources) == 0 && d.Store != kube.StoreSources {
		errs.add(path+".sources", "at least one source is required")
	}
	for i, s := range b.Sources {
		errs = append(errs, s.validate(fmt.Sprintf("%s.sources[%d]", path, i), t)...)
	}
	errs = append(errs, b.validateInject(path)...)
	errs = append(errs, b.validateTarget(path)...)
	if n := *b.Retain.MaxPrevious; n < 0 || n > MaxPreviousLimit {
		errs.add(path+".retain.maxPrevious", "%d is out of range 0..%d", n, MaxPreviousLimit)
	}
	if b.Retain.For != nil && b.Retain.For.Duration <= 0 {
		errs.add(path+".retain.for", "must be positive")
	}
	if b.Retain.DropUnusedAfter != nil && b.Retain.DropUnusedAfter.Duration <= 0 {
		errs.add(path+".retain.dropUnusedAfter", "must be positive")
	}
	errs = append(errs, b.Restart.validate(path+".restart")...)
	return errs
}

// validateNamespacedTarget checks a target of a namespaced kind d (a
// Secret or ConfigMap) of kinds.
func (b *TrustBundle) validateNamespacedTarget(path string, d kube.TargetDescriptor, kinds kube.TargetTable) FieldErrors {
	var errs FieldErrors
	t := b.Target
	errs.checkObjectName(path+".target.name", string(t.Kind), t.Name)
	errs.checkDataKey(path+".target.key", t.Key)
	// Namespaces default to the first source's; only an inline first
	// source leaves them empty. A missing or malformed first source is
	// reported above, and naming namespaces as well would be noise.
	switch {
	case t.Namespaces != nil && len(t.Namespaces) == 0 && t.NamespaceSelector == nil:
		errs.add(path+".target.namespaces", "is empty and no namespaceSelector is set: the target would be written in no namespace - list namespaces, set namespaceSelector, or leave namespaces out for the first source's namespace")
	case len(t.Namespaces) == 0 && t.NamespaceSelector == nil && len(b.Sources) > 0 && b.Sources[0].isInlineOnly():
		errs.add(path+".target.namespaces", "required when the first source is inline (or set namespaceSelector)")
	}
	if t.NamespaceSelector != nil {
		if err := t.NamespaceSelector.Validate(); err != nil {
			errs.add(path+".target.namespaceSelector", "%v", err)
		}
	}
	errs = append(errs, t.validateFields(path+".target", d, kinds)...)
	errs = append(errs, t.Metadata.validate(path+".target.metadata")...)
	errs = append(errs, t.AdditionalFormats.validate(t, path+".target")...)
	return errs
}

// isInlineOnly reports whether the source is an inline one and nothing
// else.
func (s Source) isInlineOnly() bool {
	return s.Inline != "" && s.Secret == nil && s.ConfigMap == nil
}
