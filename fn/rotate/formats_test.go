package rotate_test

import (
	"bytes"
	"crypto/x509"
	"path/filepath"
	"sort"
	"testing"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/stretchr/testify/require"
	gopkcs12 "software.sslmate.com/src/go-pkcs12"
)

// TestFormatsHoldTheBundle reads the truststores the formats golden cases
// render and checks that each holds exactly the certificates of the PEM
// bundle beside it, and that a re-render leaves every byte of the target
// as it was.
func TestFormatsHoldTheBundle(t *testing.T) {
	cases := []struct {
		dir, pemKey, p12Field, jksField string
		target                          kube.Key
		p12Password, jksPassword        string
		certs                           int
	}{
		{"formats-secret", "ca.crt", "data.truststore.p12", "data.truststore.jks",
			kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}, "", "changeit", 2},
		{"formats-configmap", "ca-bundle.crt", "binaryData.truststore.p12", "binaryData.truststore.jks",
			kube.Key{Kind: "ConfigMap", Namespace: "apps", Name: "java-trust"}, "s3cret", "changeit", 3},
	}
	for _, tc := range cases {
		t.Run(tc.dir, func(t *testing.T) {
			out, err := execute(t, goldenInput(t, filepath.Join(goldenDir, tc.dir)))
			require.NoError(t, err)
			target := findItem(parseResourceList(t, out).items, tc.target)
			require.NotNil(t, target, "target %s not in the output", tc.target)

			pemValue, found, err := kube.Lookup(target, tc.pemKey)
			require.NoError(t, err)
			require.True(t, found)
			dec, err := pki.DecodePEM(pemValue.Bytes)
			require.NoError(t, err)
			want := fingerprintSet(dec.Certificates)
			require.Len(t, want, tc.certs)

			p12, found, err := kube.Lookup(target, "truststore.p12")
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, tc.p12Field, p12.Field)
			certs, err := gopkcs12.DecodeTrustStore(p12.Bytes, tc.p12Password)
			require.NoError(t, err)
			require.Equal(t, want, fingerprintSet(certs), "the PKCS#12 store must hold the PEM bundle")

			jks, found, err := kube.Lookup(target, "truststore.jks")
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, tc.jksField, jks.Field)
			ks := keystore.New()
			require.NoError(t, ks.Load(bytes.NewReader(jks.Bytes), []byte(tc.jksPassword)))
			var jksCerts []*x509.Certificate
			for _, alias := range ks.Aliases() {
				e, err := ks.GetTrustedCertificateEntry(alias)
				require.NoError(t, err)
				c, err := x509.ParseCertificate(e.Certificate.Content)
				require.NoError(t, err)
				jksCerts = append(jksCerts, c)
			}
			require.Equal(t, want, fingerprintSet(jksCerts), "the JKS store must hold the PEM bundle")

			// Re-render the output: the target, truststores included, is
			// byte-identical.
			again, err := execute(t, out)
			require.NoError(t, err)
			before, err := target.String()
			require.NoError(t, err)
			after, err := findItem(parseResourceList(t, again).items, tc.target).String()
			require.NoError(t, err)
			require.Equal(t, before, after, "a re-render must not change the truststores")
		})
	}
}

func fingerprintSet(certs []*x509.Certificate) []string {
	var out []string
	for _, c := range certs {
		out = append(out, pki.FingerprintOf(c).String())
	}
	sort.Strings(out)
	return out
}
