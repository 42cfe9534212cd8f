package pki

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

func TestHoldsPrivateKey(t *testing.T) {
	ca := testpki.NewCA("ca", testpki.Date(2026, 1, 1), testpki.Days(365))
	key := ca.KeyPEM()
	der, err := x509.MarshalPKCS8PrivateKey(ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	rsaArmour := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: []byte("not parsed")})
	cases := []struct {
		name  string
		data  string
		holds bool // HoldsPrivateKey
		want  bool // EmbedsPrivateKey
	}{
		{"a PEM key", string(key), true, true},
		{"a certificate then a key", string(ca.PEM()) + string(key), true, true},
		{"another kind of key block", string(rsaArmour), true, true},
		{"a DER key", string(der), true, true},
		{"base64 of a PEM key (a caBundle, Secret data)", b64(key), true, true},
		{"base64 of a DER key", b64(der), true, true},
		{"a kubeconfig's client-key-data", "users:\n- name: a\n  user:\n    client-key-data: " + b64(key) + "\n", false, true},
		{"base64 of a kubeconfig (a Secret's data value)", b64([]byte("client-key-data: " + b64(key))), false, true},
		{"a JSON document's keyData", `{"tlsClientConfig":{"keyData":"` + b64(key) + `"}}`, false, true},
		{"a certificate", string(ca.PEM()), false, false},
		{"base64 of a certificate", b64(ca.PEM()), false, false},
		{"prose about keys", "put the PRIVATE KEY in tls.key, never here: -----BEGIN CERTIFICATE----- only", false, false},
		{"empty", "", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := HoldsPrivateKey([]byte(tc.data)); got != tc.holds {
				t.Errorf("HoldsPrivateKey = %t, want %t", got, tc.holds)
			}
			if got := EmbedsPrivateKey([]byte(tc.data)); got != tc.want {
				t.Errorf("EmbedsPrivateKey = %t, want %t", got, tc.want)
			}
		})
	}
}
