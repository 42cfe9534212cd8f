package trustbundle

import (
	"crypto/x509"
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The values of the targets beyond Secrets and ConfigMaps are plain fields:
// a caBundle (base64 of PEM, as the API serializes []byte), a
// ClusterTrustBundle's spec.trustBundle and a trust-manager inLine source
// (PEM text).

// readHeld reads the certificates of an existing target value: PEM text.
// Text that is not PEM, or PEM without a certificate, is an error naming
// the object and field - the value is the target's previous state, and
// guessing what it meant could drop a CA a peer needs. Other PEM blocks
// are removed, with a warning.
func (r *renderer) readHeld(ref kube.Ref, field string, data []byte) ([]*x509.Certificate, bool) {
	if strings.TrimSpace(string(data)) == "" {
		return nil, true
	}
	if len(data) > maxValueBytes {
		r.errorf(ref, field, "bundle %q: %s %s is %d bytes, more than the %d bytes rotate-certs reads from one value; fix or empty it", r.bundle.Name, ref, field, len(data), maxValueBytes)
		return nil, false
	}
	d, err := r.env.Certs.DecodePEM(data)
	if err != nil {
		r.errorf(ref, field, "bundle %q: %s %s is not PEM certificate data (%v); fix or empty it so the bundle can be rebuilt", r.bundle.Name, ref, field, err)
		return nil, false
	}
	if len(d.Certificates) == 0 {
		r.errorf(ref, field, "bundle %q: %s %s holds no certificate (only %s); fix or empty it so the bundle can be rebuilt",
			r.bundle.Name, ref, field, strings.ToLower(strings.Join(d.SkippedTypes, ", ")))
		return nil, false
	}
	if len(d.SkippedTypes) > 0 {
		r.add(ref.Result(framework.Warning, field, fmt.Sprintf("bundle %q: existing target held %d non-certificate PEM block(s) (%s); they are removed",
			r.bundle.Name, len(d.SkippedTypes), strings.ToLower(strings.Join(d.SkippedTypes, ", ")))))
	}
	return d.Certificates, true
}

// scalar returns the string value of field name of mapping m: found is
// false when the field is absent or null, and a value that is not a
// scalar is an error.
func scalar(m *yaml.RNode, name string) (value string, found bool, err error) {
	f := m.Field(name)
	if f == nil || f.Value == nil {
		return "", false, nil
	}
	y := f.Value.YNode()
	switch {
	case y.Kind == yaml.ScalarNode && y.ShortTag() == yaml.NodeTagNull:
		return "", false, nil
	case y.Kind != yaml.ScalarNode:
		return "", false, fmt.Errorf("is a YAML %s, not a string", kube.NodeKindName(y.Kind))
	}
	return y.Value, true, nil
}

// mapping returns the mapping at field name of m, nil when absent or null,
// and an error when it is something else.
func mapping(m *yaml.RNode, name string) (*yaml.RNode, error) {
	f := m.Field(name)
	if f == nil || f.Value == nil {
		return nil, nil
	}
	y := f.Value.YNode()
	switch {
	case y.Kind == yaml.ScalarNode && y.ShortTag() == yaml.NodeTagNull:
		return nil, nil
	case y.Kind != yaml.MappingNode:
		return nil, fmt.Errorf("is a YAML %s, not a map", kube.NodeKindName(y.Kind))
	}
	return f.Value, nil
}

// setString sets field name of mapping m to value unless it holds it
// already, and reports whether it changed. A multi-line value is written
// as a literal block.
func setString(m *yaml.RNode, name, value string) (bool, error) {
	if cur, found, err := scalar(m, name); err == nil && found && cur == value {
		return false, nil
	}
	v := yaml.NewStringRNode(value)
	if strings.Contains(value, "\n") {
		v.YNode().Style = yaml.LiteralStyle
	}
	return true, kube.SetField(m, name, v)
}
