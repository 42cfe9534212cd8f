package certmanager

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestRenewalOf holds renewalOf to cert-manager v1.21's renewal rule, in
// the cases cert-manager's own tests of pkg/util/pki RenewalTime check.
func TestRenewalOf(t *testing.T) {
	nb := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := time.Hour
	for _, tt := range []struct {
		name     string
		c        Certificate
		lifetime time.Duration
		want     time.Duration // after notBefore
	}{
		{"short lived, no renewBefore: two thirds", Certificate{}, 3 * h, 2 * h},
		{"six months, no renewBefore: after four", Certificate{}, 4380 * h, 2920 * h},
		{"renewBefore", Certificate{renewBefore: 20 * h}, 24 * h, 4 * h},
		{"renewBefore a day short of the lifetime", Certificate{renewBefore: 706 * h}, 730 * h, 24 * h},
		{"renewBefore longer than the lifetime is ignored", Certificate{renewBefore: 25 * h}, 24 * h, 16 * h},
		{"renewBefore equal to the lifetime is ignored", Certificate{renewBefore: 24 * h}, 24 * h, 16 * h},
		{"renewBeforePercentage 30", Certificate{renewBeforePercentage: 30}, 730 * h, 511 * h},
		{"renewBeforePercentage 100 is ignored", Certificate{renewBeforePercentage: 100}, 3 * h, 2 * h},
		{"renewBefore wins over the percentage", Certificate{renewBefore: h, renewBeforePercentage: 50}, 3 * h, 2 * h},
		{"a lifetime a second short: truncated to the second", Certificate{}, 24*h - time.Second, 16*h - time.Second},
		{"ten years at 25%: no overflow", Certificate{renewBeforePercentage: 25}, 87600 * h, 65700 * h},
		// The API's default duration, 90 days: renewed after 60.
		{"the default 90 days: after 60", Certificate{}, 2160 * h, 1440 * h},
		// cert-manager ignores a renewBefore that is not shorter than the
		// lifetime and falls through to the percentage, then the default.
		{"renewBefore past the lifetime falls through to the percentage", Certificate{renewBefore: 2160 * h, renewBeforePercentage: 25}, 2160 * h, 1620 * h},
		{"renewBeforePercentage 0 is ignored", Certificate{}, 2160 * h, 1440 * h},
		{"a third of an odd lifetime, to the second", Certificate{}, 10 * time.Second, 6 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.c.renewalOf(nb, nb.Add(tt.lifetime))
			require.False(t, r.Disabled)
			require.Equal(t, nb.Add(tt.want), r.At)
		})
	}
	for _, tt := range []struct {
		c     Certificate
		field string
	}{
		{Certificate{renewBefore: h}, "spec.renewBefore"},
		{Certificate{renewBefore: 25 * h}, "spec.duration"},
		{Certificate{renewBeforePercentage: 10}, "spec.renewBeforePercentage"},
		{Certificate{}, "spec.duration"},
		{Certificate{renewalPolicy: renewalDisabled}, "spec.renewal.policy"},
	} {
		require.Equal(t, tt.field, tt.c.renewalOf(nb, nb.Add(24*h)).Field, "%+v", tt.c)
	}
	r := Certificate{renewalPolicy: renewalDisabled}.renewalOf(nb, nb.Add(h))
	require.True(t, r.Disabled)
	require.True(t, r.At.IsZero())
	require.True(t, Certificate{windows: 1}.renewalOf(nb, nb.Add(h)).Windows)
}

func TestReadCertificate(t *testing.T) {
	node := yaml.MustParse(`apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: root, namespace: cert-manager}
spec:
  isCA: true
  secretName: root-ca
  renewBefore: 720h
  privateKey: {rotationPolicy: Never}
  renewal:
    policy: RenewBefore
    windows: [{cron: "0 9 * * 1", windowDuration: 8h}]
`)
	c, err := readCertificate(node)
	require.NoError(t, err)
	require.Equal(t, "cert-manager/root", c.Name())
	require.Equal(t, "Secret cert-manager/root-ca", c.Key().String())
	require.True(t, c.IsCA)
	require.Equal(t, 720*time.Hour, c.renewBefore)
	require.False(t, c.KeyChanges())
	require.Equal(t, 1, c.windows)

	for _, tt := range []struct{ spec, field string }{
		{"renewBefore: soon", "spec.renewBefore"},
		{"renewBeforePercentage: half", "spec.renewBeforePercentage"},
		{"privateKey: {rotationPolicy: Sometimes}", "spec.privateKey.rotationPolicy"},
		{"secretName: [a]", "spec.secretName"},
		{"renewal: {policy: Sometimes}", "spec.renewal.policy"},
	} {
		_, err := readCertificate(yaml.MustParse("apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: x}\nspec:\n  " + tt.spec + "\n"))
		require.ErrorContains(t, err, tt.field, tt.spec)
	}
	c, err = readCertificate(yaml.MustParse("apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: x}\nspec: {secretName: s}\n"))
	require.NoError(t, err)
	require.True(t, c.KeyChanges(), "rotationPolicy defaults to Always since cert-manager 1.18")
}

// TestSecretLabels: the Secret cert-manager writes carries the labels of
// spec.secretTemplate and cert-manager's own controller label, which a
// template cannot turn off; a label value that is not a string is refused,
// naming the field, as the API server refuses it.
func TestSecretLabels(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want map[string]string
		err  string
	}{
		{"{secretName: s}", map[string]string{controllerLabel: "true"}, ""},
		{`{secretName: s, secretTemplate: {labels: {corp.example.com/root: "true"}, annotations: {a: b}}}`,
			map[string]string{"corp.example.com/root": "true", controllerLabel: "true"}, ""},
		{`{secretName: s, secretTemplate: {labels: {controller.cert-manager.io/fao: "false"}}}`, map[string]string{controllerLabel: "true"}, ""},
		{"{secretName: s, secretTemplate: {labels: {root: true}}}", nil, "spec.secretTemplate.labels: must map label names to strings"},
		{"{secretName: s, secretTemplate: {labels: [root]}}", nil, "spec.secretTemplate.labels"},
		{"{secretName: s, secretTemplate: labels}", nil, "spec.secretTemplate: must be an object"},
	} {
		c, err := readCertificate(yaml.MustParse("apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: x, namespace: trust}\nspec: " + tc.spec + "\n"))
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.spec)
			continue
		}
		require.NoError(t, err, tc.spec)
		require.Equal(t, tc.want, c.SecretLabels(), tc.spec)
	}
}

func TestCAInjectorOwns(t *testing.T) {
	for _, tt := range []struct {
		annotations map[string]string
		want        string
	}{
		{map[string]string{InjectCAFrom: "ns/cert"}, InjectCAFrom},
		{map[string]string{InjectCAFromSecret: "cert-manager/cert-manager-webhook-ca"}, InjectCAFromSecret},
		{map[string]string{InjectAPIServerCA: "true"}, InjectAPIServerCA},
		{map[string]string{InjectAPIServerCA: "false"}, ""},
		{map[string]string{"rotate-certs.dev/inject-ca-from": "gw"}, ""},
	} {
		key, _, ok := CAInjectorOwns(tt.annotations)
		require.Equal(t, tt.want, key)
		require.Equal(t, tt.want != "", ok)
	}
}

// TestCertificateIsCASpellings: spec.isCA is a boolean, which kubectl
// reads as YAML 1.1 (True, yes and on are true); a quoted "true" is a
// string the API server refuses.
func TestCertificateIsCASpellings(t *testing.T) {
	for spelling, want := range map[string]bool{"true": true, "True": true, "yes": true, "on": true, `"true"`: false, "false": false, "no": false} {
		node := yaml.MustParse("apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: ca, namespace: trust}\nspec: {secretName: ca, isCA: " + spelling + "}\n")
		c, err := readCertificate(node)
		require.NoError(t, err)
		require.Equal(t, want, c.IsCA, spelling)
	}
}
