package policy

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func decodeYAML(t *testing.T, text string) (*RotationPolicy, error) {
	t.Helper()
	node, err := yaml.Parse(text)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return Decode(node)
}

const formatsHead = `apiVersion: rotate-certs.dev/v1alpha1
kind: RotationPolicy
metadata: {name: p}
spec:
  trustBundles:
  - name: gw
    sources:
    - secret: {name: ca, namespace: gw}
    target:
      name: gw-trust
`

func TestAdditionalFormatsDefaults(t *testing.T) {
	tests := []struct {
		name                 string
		formats              string
		wantP12Key, wantP12P string
		wantJKSKey, wantJKSP string
		noP12, noJKS         bool
	}{
		{
			name:       "empty objects get default keys and passwords",
			formats:    "{pkcs12: {}, jks: {}}",
			wantP12Key: "truststore.p12", wantP12P: "",
			wantJKSKey: "truststore.jks", wantJKSP: "changeit",
		},
		{
			name:       "explicit values are kept",
			formats:    `{pkcs12: {key: a.p12, password: pw}, jks: {key: b.jks, password: "123456"}}`,
			wantP12Key: "a.p12", wantP12P: "pw",
			wantJKSKey: "b.jks", wantJKSP: "123456",
		},
		{
			name:       "only jks",
			formats:    "{jks: {key: t.jks}}",
			noP12:      true,
			wantJKSKey: "t.jks", wantJKSP: "changeit",
		},
		{
			name:       "only pkcs12 with explicit empty password",
			formats:    `{pkcs12: {password: ""}}`,
			wantP12Key: "truststore.p12", wantP12P: "",
			noJKS: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := decodeYAML(t, formatsHead+"      additionalFormats: "+tc.formats+"\n")
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			tgt := p.Spec.TrustBundles[0].Target
			a := tgt.AdditionalFormats
			if tc.noP12 != (a.PKCS12 == nil) || tc.noJKS != (a.JKS == nil) {
				t.Fatalf("pkcs12 %v, jks %v; want absent %v, %v", a.PKCS12, a.JKS, tc.noP12, tc.noJKS)
			}
			if a.PKCS12 != nil && (a.PKCS12.Key != tc.wantP12Key || a.PKCS12.PasswordValue() != tc.wantP12P) {
				t.Errorf("pkcs12 = %q/%q, want %q/%q", a.PKCS12.Key, a.PKCS12.PasswordValue(), tc.wantP12Key, tc.wantP12P)
			}
			if a.JKS != nil && (a.JKS.Key != tc.wantJKSKey || a.JKS.PasswordValue() != tc.wantJKSP) {
				t.Errorf("jks = %q/%q, want %q/%q", a.JKS.Key, a.JKS.PasswordValue(), tc.wantJKSKey, tc.wantJKSP)
			}
			keys := tgt.Keys()
			if keys[0] != "ca.crt" || len(keys) != 1+btoi(!tc.noP12)+btoi(!tc.noJKS) {
				t.Errorf("Keys() = %v", keys)
			}
		})
	}
}

func TestAdditionalFormatsAbsent(t *testing.T) {
	p, err := decodeYAML(t, formatsHead)
	if err != nil {
		t.Fatal(err)
	}
	if tgt := p.Spec.TrustBundles[0].Target; tgt.AdditionalFormats != nil || len(tgt.Keys()) != 1 {
		t.Errorf("no additionalFormats in the policy, got %+v, keys %v", tgt.AdditionalFormats, tgt.Keys())
	}
}

// additionalFormatsErrorCases are policies whose additionalFormats a
// decode refuses, with a substring of each error line.
var additionalFormatsErrorCases = []struct {
	name   string
	policy string
	want   []string // each a substring of one error line
}{
	{
		name:   "pkcs12 key equals the PEM key",
		policy: formatsHead + "      additionalFormats: {pkcs12: {key: ca.crt}}\n",
		want:   []string{`spec.trustBundles[0].target.additionalFormats.pkcs12.key: "ca.crt" is also written by spec.trustBundles[0].target.key`},
	},
	{
		name:   "jks key equals the pkcs12 key",
		policy: formatsHead + "      additionalFormats: {pkcs12: {key: store}, jks: {key: store}}\n",
		want:   []string{`additionalFormats.jks.key: "store" is also written by spec.trustBundles[0].target.additionalFormats.pkcs12.key`},
	},
	{
		name:   "jks default key equals an explicit PEM key",
		policy: formatsHead + "      key: truststore.jks\n      additionalFormats: {jks: {}}\n",
		want:   []string{`additionalFormats.jks.key: "truststore.jks" is also written by`},
	},
	{
		name:   "invalid key",
		policy: formatsHead + "      additionalFormats: {jks: {key: a/b}}\n",
		want:   []string{`spec.trustBundles[0].target.additionalFormats.jks.key: "a/b" is not a valid data key`},
	},
	{
		name:   "empty jks password",
		policy: formatsHead + "      additionalFormats: {jks: {password: \"\"}}\n",
		want:   []string{`spec.trustBundles[0].target.additionalFormats.jks.password: must not be empty`},
	},
	{
		name:   "unknown format",
		policy: formatsHead + "      additionalFormats: {pem: {key: x}}\n",
		want:   []string{`spec.trustBundles[0].target.additionalFormats.pem: unknown field (known: jks, pkcs12)`},
	},
	{
		name:   "unknown field in a format",
		policy: formatsHead + "      additionalFormats: {jks: {alias: x}}\n",
		want:   []string{`additionalFormats.jks.alias: unknown field (known: key, password)`},
	},
	{
		name:   "password of the wrong type",
		policy: formatsHead + "      additionalFormats: {pkcs12: {password: 123456}}\n",
		want:   []string{`additionalFormats.pkcs12.password: must be a string, got number 123456`},
	},
	{
		name: "another bundle writes the same key of the same object",
		policy: formatsHead + `      additionalFormats: {jks: {}}
  - name: other
    sources:
    - secret: {name: ca2, namespace: gw}
    target:
      name: gw-trust
      key: truststore.jks
`,
		want: []string{`spec.trustBundles[1].target.additionalFormats: writes Secret gw/gw-trust key truststore.jks, which spec.trustBundles[0].target also writes`},
	},
	{
		name: "a source reads the bundle's own truststore",
		policy: `apiVersion: rotate-certs.dev/v1alpha1
kind: RotationPolicy
spec:
  trustBundles:
  - name: gw
    sources:
    - secret: {name: gw-trust, namespace: gw, key: truststore.p12}
    target:
      name: gw-trust
      additionalFormats: {pkcs12: {}}
`,
		want: []string{`spec.trustBundles[0].sources[0]: reads key truststore.p12 of Secret gw/gw-trust, which this bundle writes as a truststore`},
	},
}

func TestAdditionalFormatsErrors(t *testing.T) {
	for _, tc := range additionalFormatsErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeYAML(t, tc.policy)
			if err == nil {
				t.Fatalf("decode succeeded, want errors %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestAdditionalFormatsDistinctObjectsAreFine(t *testing.T) {
	// Same keys, different target objects: no clash.
	_, err := decodeYAML(t, formatsHead+`      additionalFormats: {jks: {}, pkcs12: {}}
  - name: other
    sources:
    - secret: {name: ca2, namespace: gw}
    target:
      name: other-trust
      additionalFormats: {jks: {}, pkcs12: {}}
`)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
