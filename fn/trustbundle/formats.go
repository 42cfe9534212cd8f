package trustbundle

import (
	"crypto/x509"
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/truststore"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// format is one binary truststore requested by target.additionalFormats.
type format struct {
	name string // field name in the policy, for messages
	key  string
	enc  truststore.Encoder
}

// formats lists the truststores the target asks for.
func (r *fanOut) formats() []format {
	a := r.bundle.Target.AdditionalFormats
	if a == nil {
		return nil
	}
	var out []format
	if a.PKCS12 != nil {
		out = append(out, format{"pkcs12", a.PKCS12.Key, truststore.PKCS12{Password: a.PKCS12.PasswordValue()}})
	}
	if a.JKS != nil {
		out = append(out, format{"jks", a.JKS.Key, truststore.JKS{Password: a.JKS.PasswordValue()}})
	}
	return out
}

// writeFormats writes the binary truststores of target.additionalFormats
// next to the PEM key, holding the same certificates. The encoders are
// deterministic and a value is only written when its bytes differ, so an
// unchanged bundle leaves the object byte-identical. It reports whether
// anything changed.
func (r *fanOut) writeFormats(node *yaml.RNode, certs []*x509.Certificate) (bool, error) {
	changed := false
	for _, f := range r.formats() {
		data, err := f.enc.Encode(certs)
		if err != nil {
			return false, fmt.Errorf("additionalFormats.%s: %w", f.name, err)
		}
		_, c, err := setBinaryValue(node, f.key, data)
		if err != nil {
			return false, fmt.Errorf("additionalFormats.%s: %w", f.name, err)
		}
		changed = changed || c
	}
	return changed, nil
}
