package policy

import "github.com/rotate-certs/rotate-certs/fn/kube"

// setDefaults fills every unset optional field with its documented default.
// Target namespaces default to the first source's namespace; a bundle whose
// first source is inline keeps an empty list (Validate reports it unless a
// namespaceSelector is set).
func (p *RotationPolicy) setDefaults() {
	if p.Spec.Expiry.WarnWithin == nil {
		p.Spec.Expiry.WarnWithin = &Duration{DefaultWarnWithin}
	}
	if p.Spec.Expiry.FailWithin == nil {
		p.Spec.Expiry.FailWithin = &Duration{DefaultFailWithin}
	}
	for i := range p.Spec.TrustBundles {
		p.Spec.TrustBundles[i].setDefaults()
	}
	defaultClusterAPI(p.Spec.ClusterAPI)
	p.Spec.Alerts.setDefaults()
}

// setDefaults fills the bundle's unset optional fields.
func (b *TrustBundle) setDefaults() {
	if b.Mode == "" {
		b.Mode = ModeBundle
	}
	for i := range b.Sources {
		s := &b.Sources[i]
		if s.Secret != nil && s.Secret.Key == "" {
			s.Secret.Key = defaultSecretKey
		}
		if s.ConfigMap != nil && s.ConfigMap.Key == "" {
			s.ConfigMap.Key = defaultConfigMapKey
		}
	}
	b.defaultTarget()
	if b.Retain.MaxPrevious == nil {
		n := defaultMaxPrevious
		b.Retain.MaxPrevious = &n
	}
	if b.Retain.ProtectIssuers == nil {
		yes := true
		b.Retain.ProtectIssuers = &yes
	}
	b.Restart.setDefaults()
}

// Ref returns the object reference of a Secret or ConfigMap source, nil for
// an inline one.
func (s Source) Ref() *ObjectKeyRef {
	if s.Secret != nil {
		return s.Secret
	}
	return s.ConfigMap
}

// Kind returns the kind of the object a source reads - the target kind
// of that name, so that a bundle reading its own target is told
// (Source.validate) - or "inline".
func (s Source) Kind() string {
	switch {
	case s.Secret != nil:
		return string(kube.TargetSecret)
	case s.ConfigMap != nil:
		return string(kube.TargetConfigMap)
	default:
		return "inline"
	}
}

// field returns the source's field that names its object: "secret" or
// "configMap"; "" for an inline source.
func (s Source) field() string {
	switch {
	case s.Secret != nil:
		return "secret"
	case s.ConfigMap != nil:
		return "configMap"
	default:
		return ""
	}
}
