package trustdiff

import (
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/inventory"
)

// An embedded value's name tells a certificate presented with its chain
// from trust only when it says so: a certificate word and no trust word.
func TestPresentedByName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		place inventory.Place
		want  bool
	}{
		{"crtPEM", inventory.PlaceHelmValue, true},
		{"TLS_CERT", inventory.PlaceEnv, true},
		{"certificate", inventory.PlaceHelmValue, true},
		{"cert-chain.pem", inventory.PlaceEnv, true},
		{"identityTrustAnchorsPEM", inventory.PlaceHelmValue, false},
		{"LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS", inventory.PlaceEnv, false},
		{"caBundle", inventory.PlaceHelmValue, false},
		{"CA_CERT", inventory.PlaceEnv, false},
		{"rootCert", inventory.PlaceHelmValue, false},
		{"pem", inventory.PlaceHelmValue, false},
		{"", inventory.PlaceEnv, false},
		{"tls.crt", inventory.PlaceValue, false}, // a Secret's keys are certKeys' business
	} {
		if got := presented(&value{place: tc.place, name: tc.name}); got != tc.want {
			t.Errorf("presented(%q) = %t, want %t (words %q)", tc.name, got, tc.want, nameWords(tc.name))
		}
	}
}
