package policy

import (
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// DefaultTrustNamespace is the namespace trust-manager reads a Bundle's
// Secret and ConfigMap sources from unless it was installed with another
// --trust-namespace.
const DefaultTrustNamespace = "cert-manager"

// IsZero reports whether no field of the target is set: the bundle has no
// target object and only injects its certificates into caBundle fields.
func (t Target) IsZero() bool {
	return t.Kind == "" && t.Name == "" && len(t.Namespaces) == 0 && t.NamespaceSelector == nil && t.Key == "" &&
		t.Metadata == nil && t.AdditionalFormats == nil && t.SignerName == "" && t.TrustNamespace == ""
}

// namespaced reports whether the target is of a kind written once per
// namespace (a Secret or ConfigMap; the other kinds are cluster-scoped),
// by the target-kind table.
func (t Target) namespaced() bool {
	d, _ := kube.TargetKinds().Lookup(t.Kind)
	return d.Namespaced
}

// HasObject reports whether the bundle writes a target object (a bundle
// without one only injects).
func (b *TrustBundle) HasObject() bool { return b.Target.Kind != "" }

// defaultTarget fills the target's unset fields by its kind's row of the
// target-kind table. A zero target stays zero.
func (b *TrustBundle) defaultTarget() {
	t := &b.Target
	if t.IsZero() {
		return
	}
	if t.Kind == "" {
		t.Kind = kube.TargetSecret
	}
	d, _ := kube.TargetKinds().Lookup(t.Kind)
	if t.Key == "" {
		t.Key = d.DefaultKey
	}
	if d.Applies("additionalFormats") {
		t.AdditionalFormats.setDefaults()
	}
	// namespaces: [] (set, empty) asks for no implicit namespace: with
	// a namespaceSelector, only the selected ones get a target.
	if d.Applies("namespaces") && t.Namespaces == nil && len(b.Sources) > 0 {
		if ref := b.Sources[0].Ref(); ref != nil {
			t.Namespaces = []string{ref.Namespace}
		}
	}
	if d.Applies("trustNamespace") && t.TrustNamespace == "" {
		t.TrustNamespace = DefaultTrustNamespace
	}
}

// targetFields are the target fields that apply to some kinds only, in
// the order validation names them, and whether t sets each.
func (t Target) targetFields() []struct {
	name string
	set  bool
} {
	return []struct {
		name string
		set  bool
	}{
		{"namespaces", len(t.Namespaces) > 0},
		{"namespaceSelector", t.NamespaceSelector != nil},
		{"key", t.Key != ""},
		{"additionalFormats", t.AdditionalFormats != nil},
		{"signerName", t.SignerName != ""},
		{"trustNamespace", t.TrustNamespace != ""},
	}
}

// validateFields checks that t, of kind d, sets only the fields its row
// of the target-kind table kinds says apply to it (path is ".target").
func (t Target) validateFields(path string, d kube.TargetDescriptor, kinds kube.TargetTable) FieldErrors {
	var errs FieldErrors
	for _, f := range t.targetFields() {
		if !f.set || d.Applies(f.name) {
			continue
		}
		var owners []string
		namespaced := false
		for _, o := range kinds.Rows() {
			if o.Applies(f.name) {
				owners = append(owners, targetName(o))
				namespaced = namespaced || o.Namespaced
			}
		}
		switch {
		case d.Namespaced || len(owners) == 0:
			errs.add(path+"."+f.name, "does not apply to a %s target", t.Kind)
		case namespaced:
			errs.add(path+"."+f.name, "does not apply to a %s target, which is one cluster-scoped object", t.Kind)
		default:
			errs.add(path+"."+f.name, "applies only to a %s target", strings.Join(owners, " or "))
		}
	}
	return errs
}

// targetName names a target kind in messages: trust-manager's Bundle with
// its project, whose name the kind alone does not say.
func targetName(d kube.TargetDescriptor) string {
	if d.Store == kube.StoreSources {
		return string(d.Kind) + " (trust-manager)"
	}
	return string(d.Kind)
}

// validateClusterScoped checks a target of a cluster-scoped kind d of
// kinds at path (".target"): the fields of other kinds do not apply, and
// the name follows its API's rules.
func (t Target) validateClusterScoped(path string, sources int, d kube.TargetDescriptor, kinds kube.TargetTable) FieldErrors {
	errs := t.validateFields(path, d, kinds)
	switch {
	case d.Applies("signerName"):
		errs = append(errs, validateClusterTrustBundleName(t.Name, t.SignerName, path)...)
	case t.Name != "" && !kube.ValidObjectName(t.Name):
		errs.add(path+".name", "%s is not a valid %s name: a lowercase DNS subdomain of at most %d characters", kube.Quote(t.Name), t.Kind, maxPrefix)
	}
	if d.Applies("trustNamespace") && !kube.ValidDNSLabel(t.TrustNamespace) {
		errs.add(path+".trustNamespace", "%s is not a namespace name (a lowercase DNS label)", kube.Quote(t.TrustNamespace))
	}
	if d.Store == kube.StoreSources && sources > 0 {
		errs.add(strings.TrimSuffix(path, ".target")+".sources",
			"must be empty for a Bundle target: rotate-certs reads the trust-manager Bundle's own spec.sources (the Secrets and ConfigMaps of its trust namespace, and its inLine sources), which stay the one list of what is trusted")
	}
	return errs
}

// maxSignerName is the longest signer name the API accepts: a DNS
// subdomain, '/', and a path of a DNS label, '.' and a DNS subdomain.
const maxSignerName = 253 + 1 + 63 + 1 + 253

// validateClusterTrustBundleName checks a ClusterTrustBundle name and
// signer name as the API server does. Without a signer name the name is a
// DNS subdomain with no ':'; with one, the signer name has the form
// <domain>/<path> and the object name must be the signer name with '/'
// replaced by ':', then ':' and a DNS subdomain.
func validateClusterTrustBundleName(name, signerName, path string) FieldErrors {
	var errs FieldErrors
	if signerName == "" {
		switch {
		case name == "":
		case strings.Contains(name, ":"):
			errs.add(path+".name", "%s contains ':', which only the name of a ClusterTrustBundle with a signerName may hold (set target.signerName, or drop the ':')", kube.Quote(name))
		case !kube.ValidObjectName(name):
			errs.add(path+".name", "%s is not a valid ClusterTrustBundle name: a lowercase DNS subdomain of at most %d characters", kube.Quote(name), maxPrefix)
		}
		return errs
	}
	if msg := checkSignerName(signerName); msg != "" {
		errs.add(path+".signerName", "%s %s", kube.Quote(signerName), msg)
		return errs
	}
	prefix := strings.ReplaceAll(signerName, "/", ":") + ":"
	suffix, ok := strings.CutPrefix(name, prefix)
	switch {
	case name == "":
	case !ok:
		errs.add(path+".name", "%s does not start with %q: the name of a ClusterTrustBundle with signerName %s must be %s<suffix> (the API server rejects any other)", kube.Quote(name), prefix, signerName, prefix)
	case suffix == "" || !kube.ValidObjectName(suffix):
		errs.add(path+".name", "%s: the part after %q must be a lowercase DNS subdomain, such as %sv1", kube.Quote(name), prefix, prefix)
	}
	return errs
}

// checkSignerName returns why s is not a signer name ("" when it is one):
// a domain of at least two DNS labels, '/', and a path of DNS subdomains
// separated by '.'.
func checkSignerName(s string) string {
	domain, rest, found := strings.Cut(s, "/")
	if !found || strings.Contains(rest, "/") {
		return "is not of the form example.com/signer-name (exactly one '/')"
	}
	labels := strings.Split(domain, ".")
	if len(domain) > maxPrefix || len(labels) < 2 {
		return fmt.Sprintf("has domain %s; it must be a DNS name of at least two labels, at most %d characters", kube.Quote(domain), maxPrefix)
	}
	for _, l := range labels {
		if !kube.ValidDNSLabel(l) {
			return fmt.Sprintf("has domain %s; %s is not a lowercase DNS label", kube.Quote(domain), kube.Quote(l))
		}
	}
	for _, p := range strings.Split(rest, ".") {
		if !kube.ValidObjectName(p) {
			return fmt.Sprintf("has path %s; %s is not a lowercase DNS subdomain", kube.Quote(rest), kube.Quote(p))
		}
	}
	if len(s) > maxSignerName {
		return fmt.Sprintf("is longer than %d characters", maxSignerName)
	}
	return ""
}
