package policy

import (
	"encoding/json"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzDecode feeds arbitrary YAML to the strict policy decoder. It must not
// panic; an accepted policy must be fully defaulted and valid, and must
// decode again, to the same value, from its own JSON encoding. A rejected
// one must say why. Seeds: the calls below and testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	for _, spec := range []string{
		"spec: {}\n",
		"spec:\n  now: \"2026-11-22T00:00:00Z\"\n  expiry: {warnWithin: 720h, failWithin: 7d}\n",
		`spec:
  trustBundles:
  - name: gateway
    mode: Bundle
    sources:
    - secret: {name: ca, namespace: gw, key: ca.crt, optional: true}
    - configMap: {name: extra, namespace: gw}
    - inline: "-----BEGIN CERTIFICATE-----\n"
    target:
      kind: ConfigMap
      name: trust
      namespaces: [gw, other]
      namespaceSelector:
        matchLabels: {trust: gw}
        matchExpressions: [{key: env, operator: In, values: [prod]}]
    retain: {maxPrevious: 2, for: 90d, protectIssuers: false}
`,
		"spec:\n  trustBundles:\n  - name: a\n    sources: [{secret: {name: x}}]\n    target: {name: x}\n",
		"spec:\n  trustBundles:\n  - name: a\n    mode: Copy\n    sources: [{secret: {name: s, namespace: n}}]\n    target: {name: t}\n    retain: {maxPrevious: 17}\n",
		"spec:\n  trustBundles: [{name: a}, {name: a}]\n",
		"spec: {expiry: {warnWithin: -1h}}\n",
		"spec: {expiry: {warnWithin: 99999999999999999999d}}\n",
		"spec: {trustBundles: [{name: a, retain: {maxPrevious: 1.5}}]}\n",
		"spec: {unknown: 1}\n",
	} {
		f.Add("apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata: {name: p}\n" + spec)
	}
	f.Add("apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n")
	f.Add("{\"apiVersion\": \"rotate-certs.dev/v1alpha1\", \"kind\": \"RotationPolicy\", \"spec\": null}")
	f.Fuzz(func(t *testing.T, text string) {
		node, err := yaml.Parse(text)
		if err != nil {
			return
		}
		// Every result about the policy names it: reading its name and
		// file must not panic, whatever its shape.
		_ = kube.RefOf(node)
		p, err := Decode(node)
		if err != nil {
			require.Nil(t, p)
			require.NotEmpty(t, err.Error(), "a rejection must say why")
			require.NotContains(t, err.Error(), "-----BEGIN", "a rejection names the kind of value, never a PEM block it holds")
			return
		}
		require.Empty(t, p.validate(), "an accepted policy is valid")
		require.NotNil(t, p.Spec.Expiry.WarnWithin)
		require.NotNil(t, p.Spec.Expiry.FailWithin)
		// Durations are bounded, so a date plus one never overflows.
		require.LessOrEqual(t, p.Spec.Expiry.WarnWithin.Abs(), maxDuration)
		require.LessOrEqual(t, p.Spec.Expiry.FailWithin.Abs(), maxDuration)
		for _, b := range p.Spec.TrustBundles {
			require.NotNil(t, b.Retain.MaxPrevious, "defaulted")
			require.NotNil(t, b.Retain.ProtectIssuers, "defaulted")
			require.Contains(t, []string{ModeBundle, ModeCopy}, b.Mode)
			// A bundle may have no target object and only inject (found by
			// this fuzzer: the property had said every bundle has one).
			if !b.Target.IsZero() {
				require.Contains(t, kube.TargetKinds().Names(), string(b.Target.Kind))
				require.True(t, !b.Target.namespaced() || b.Target.Key != "", "a Secret or ConfigMap target's key is defaulted")
			}
			if b.Retain.For != nil {
				require.LessOrEqual(t, b.Retain.For.Abs(), maxDuration)
			}
		}
		raw, err := json.Marshal(p)
		require.NoError(t, err)
		again, err := decodeJSON(raw)
		require.NoError(t, err, "a decoded policy must decode again from its JSON: %s", raw)
		// Empty lists and maps are omitted from the JSON, so compare the
		// encodings: the JSON of a decoded policy is a fixed point.
		rawAgain, err := json.Marshal(again)
		require.NoError(t, err)
		require.JSONEq(t, string(raw), string(rawAgain))
	})
}
