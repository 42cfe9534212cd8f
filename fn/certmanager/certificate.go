// Package certmanager reads cert-manager's objects as rotate-certs needs
// them, as plain Go values: which Secret a Certificate writes and the
// labels cert-manager sets on it, when cert-manager renews the
// certificate in it and whether the renewal makes a new key (renewal.go),
// which sources a trust-manager Bundle reads (trustmanager.go), and which
// annotations make cert-manager's cainjector the owner of a caBundle
// (cainjector.go). The rules are
// cert-manager v1.21's, read from its code (pkg/util/pki RenewalTime, the
// Certificate API's defaults).
package certmanager

import (
	"encoding/json"
	"maps"
	"strconv"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// cert-manager's API.
const (
	// group is cert-manager's API group.
	group = "cert-manager.io"
	// apiVersion is the apiVersion of the Certificates rotate-certs reads.
	apiVersion = group + "/v1"
	// kindCertificate is a cert-manager Certificate.
	kindCertificate = "Certificate"
	// CertificateNameAnnotation is set by cert-manager on the Secret of a
	// Certificate: the Certificate's name (its namespace is the Secret's).
	CertificateNameAnnotation = "cert-manager.io/certificate-name"
	// controllerLabel is set to "true" by cert-manager on every Secret it
	// writes for a Certificate (v1.21: PartOfCertManagerControllerLabelKey).
	controllerLabel = "controller.cert-manager.io/fao"
)

// Private key rotation policies (spec.privateKey.rotationPolicy).
const (
	// rotationAlways makes a new key at every issuance: cert-manager's
	// default since v1.18.
	rotationAlways = "Always"
	// rotationNever keeps the key of the Secret across issuances.
	rotationNever = "Never"
)

// Renewal policies (spec.renewal.policy; the API accepts these two).
const (
	// renewalRenewBefore renews by spec.renewBefore (or its percentage,
	// or the default), within spec.renewal.windows when set.
	renewalRenewBefore = "RenewBefore"
	// renewalDisabled turns renewal off.
	renewalDisabled = "Disabled"
)

// Certificate is what rotate-certs reads of a cert-manager Certificate.
type Certificate struct {
	// Ref is the Certificate.
	Ref kube.Ref
	// secretName is spec.secretName, in the Certificate's namespace.
	secretName string
	// IsCA is spec.isCA.
	IsCA bool
	// renewBefore is spec.renewBefore, 0 when unset.
	renewBefore time.Duration
	// renewBeforePercentage is spec.renewBeforePercentage, 0 when unset.
	renewBeforePercentage int32
	// rotationPolicy is spec.privateKey.rotationPolicy as written; ""
	// reads as rotationAlways.
	rotationPolicy string
	// renewalPolicy is spec.renewal.policy as written ("", RenewBefore or
	// Disabled), and windows the number of spec.renewal.windows.
	renewalPolicy string
	windows       int
	// templateLabels is spec.secretTemplate.labels: cert-manager copies
	// them onto the Secret it writes.
	templateLabels map[string]string
}

// isCertificate reports whether node is a cert-manager Certificate of the
// version rotate-certs reads.
func isCertificate(node *yaml.RNode) bool {
	return node.GetKind() == kindCertificate && node.GetApiVersion() == apiVersion
}

// readCertificate reads a Certificate. A field of the wrong shape or value is a
// *kube.FieldError naming it.
func readCertificate(node *yaml.RNode) (Certificate, error) {
	c := Certificate{Ref: kube.RefOf(node)}
	var err error
	str := func(path ...string) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = kube.StringAt(node, path)
		return s
	}
	c.secretName = str("spec", "secretName")
	str("spec", "isCA") // a scalar, or a field error; its value is a boolean, below
	before := str("spec", "renewBefore")
	pct := str("spec", "renewBeforePercentage")
	c.rotationPolicy = str("spec", "privateKey", "rotationPolicy")
	c.renewalPolicy = str("spec", "renewal", "policy")
	if err != nil {
		return c, err
	}
	c.IsCA = kube.TrueAt(node, "spec", "isCA")
	if before != "" {
		d, perr := time.ParseDuration(before)
		if perr != nil || d < 0 {
			return c, kube.FieldErrorf("spec.renewBefore", "%s is not a duration (such as 720h)", kube.Quote(before))
		}
		c.renewBefore = d
	}
	if pct != "" {
		n, perr := strconv.ParseInt(pct, 10, 32)
		if perr != nil {
			return c, kube.FieldErrorf("spec.renewBeforePercentage", "%s is not an integer", kube.Quote(pct))
		}
		c.renewBeforePercentage = int32(n)
	}
	switch c.rotationPolicy {
	case "", rotationAlways, rotationNever:
	default:
		return c, kube.FieldErrorf("spec.privateKey.rotationPolicy", "%s is not Always or Never", kube.Quote(c.rotationPolicy))
	}
	switch c.renewalPolicy {
	case "", renewalRenewBefore, renewalDisabled:
	default:
		return c, kube.FieldErrorf("spec.renewal.policy", "%s is not RenewBefore or Disabled", kube.Quote(c.renewalPolicy))
	}
	if w := kube.At(node, "spec", "renewal", "windows"); w != nil && w.YNode().Kind == yaml.SequenceNode {
		c.windows = len(w.YNode().Content)
	}
	c.templateLabels, err = templateLabels(node)
	return c, err
}

// templateLabels reads spec.secretTemplate.labels through JSON, as the API
// server does: a label whose value is not a string (an unquoted true) is
// a *kube.FieldError, which the API server refuses too.
func templateLabels(node *yaml.RNode) (map[string]string, error) {
	const field = "spec.secretTemplate.labels"
	n, err := kube.NodeAt(node, []string{"spec", "secretTemplate", "labels"})
	if err != nil || n == nil {
		return nil, err
	}
	var labels map[string]string
	raw, err := n.MarshalJSON()
	if err == nil {
		err = json.Unmarshal(raw, &labels)
	}
	if err != nil {
		return nil, kube.FieldErrorf(field, "must map label names to strings (quote a value such as \"true\")")
	}
	return labels, nil
}

// SecretLabels returns the labels cert-manager sets on the Secret it
// writes: spec.secretTemplate.labels and its own controllerLabel. A label
// selector of a trust-manager source sees them on that Secret once
// cert-manager has written it, whether or not git holds a copy.
func (c Certificate) SecretLabels() map[string]string {
	out := make(map[string]string, len(c.templateLabels)+1)
	maps.Copy(out, c.templateLabels)
	out[controllerLabel] = "true"
	return out
}

// Key is the Secret the Certificate writes.
func (c Certificate) Key() kube.Key {
	return kube.Key{Kind: "Secret", Namespace: c.Ref.Namespace, Name: c.secretName}
}

// Name is "namespace/name" of the Certificate.
func (c Certificate) Name() string {
	if c.Ref.Namespace == "" {
		return c.Ref.Name
	}
	return c.Ref.Namespace + "/" + c.Ref.Name
}

// KeyChanges reports whether a renewal makes a new private key: always,
// unless spec.privateKey.rotationPolicy is Never (the default has been
// Always since cert-manager v1.18).
func (c Certificate) KeyChanges() bool { return c.rotationPolicy != rotationNever }

// Problem is a Certificate that could not be read.
type Problem struct {
	Ref kube.Ref
	Err error
	// Secret is the Secret it names in spec.secretName when that field
	// reads as a string (its Name is empty otherwise).
	Secret kube.Key
}

// Writers maps each Secret to the Certificates of items that write it
// (spec.secretName in their namespace), in input order, and lists the
// Certificates that could not be read.
func Writers(items []*yaml.RNode) (map[kube.Key][]Certificate, []Problem) {
	out := map[kube.Key][]Certificate{}
	var problems []Problem
	for _, it := range items {
		if !isCertificate(it) {
			continue
		}
		c, err := readCertificate(it)
		if err != nil {
			p := Problem{Ref: kube.RefOf(it), Err: err, Secret: kube.Key{Kind: "Secret", Namespace: it.GetNamespace()}}
			p.Secret.Name, _ = kube.StringAt(it, []string{"spec", "secretName"})
			problems = append(problems, p)
			continue
		}
		if c.secretName != "" {
			out[c.Key()] = append(out[c.Key()], c)
		}
	}
	return out, problems
}
