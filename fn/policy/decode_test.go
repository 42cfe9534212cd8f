package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const header = "apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata: {name: p}\n"

func decode(t *testing.T, spec string) (*RotationPolicy, error) {
	t.Helper()
	node, err := yaml.Parse(header + spec)
	require.NoError(t, err)
	return Decode(node)
}

// decodeErrorsAt decodes spec, requires that it fails with FieldErrors,
// and returns the messages of those at field, one per line, and the error.
func decodeErrorsAt(t *testing.T, spec, field string) (string, error) {
	t.Helper()
	_, err := decode(t, spec)
	require.Error(t, err)
	fes, ok := err.(FieldErrors)
	require.True(t, ok, "want FieldErrors, got %T", err)
	var at []string
	for _, fe := range fes {
		if fe.Field == field {
			at = append(at, fe.Err.Error())
		}
	}
	require.NotEmpty(t, at, "want an error at %s, got:\n%v", field, err)
	return strings.Join(at, "\n"), err
}

func TestDecodeDefaults(t *testing.T) {
	p, err := decode(t, `spec:
  trustBundles:
  - name: gw
    sources:
    - secret: {name: ca, namespace: gw-system}
    - configMap: {name: roots, namespace: gw-system}
    target: {name: trust}
  - name: cm
    sources: [{inline: "x"}]
    target: {kind: ConfigMap, name: trust, namespaces: [a]}
`)
	require.NoError(t, err)
	require.Equal(t, "p", p.Name())
	require.Equal(t, 720*time.Hour, p.Spec.Expiry.WarnWithin.Duration)
	require.Equal(t, 168*time.Hour, p.Spec.Expiry.FailWithin.Duration)
	b := p.Spec.TrustBundles[0]
	require.Equal(t, ModeBundle, b.Mode)
	require.Equal(t, "ca.crt", b.Sources[0].Secret.Key)
	require.Equal(t, "ca-bundle.crt", b.Sources[1].ConfigMap.Key)
	require.Equal(t, kube.TargetSecret, b.Target.Kind)
	require.Equal(t, "ca.crt", b.Target.Key)
	require.Equal(t, []string{"gw-system"}, b.Target.Namespaces)
	require.Equal(t, 1, *b.Retain.MaxPrevious)
	require.True(t, *b.Retain.ProtectIssuers)
	require.Nil(t, b.Retain.For)
	require.Equal(t, "ca-bundle.crt", p.Spec.TrustBundles[1].Target.Key)
}

func TestDecodeDurationsAndClock(t *testing.T) {
	p, err := decode(t, `spec:
  now: "2026-11-22T10:00:00+02:00"
  expiry: {warnWithin: 30d, failWithin: 90m}
`)
	require.NoError(t, err)
	require.Equal(t, 30*24*time.Hour, p.Spec.Expiry.WarnWithin.Duration)
	require.Equal(t, 90*time.Minute, p.Spec.Expiry.FailWithin.Duration)
	require.Equal(t, time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC), p.Clock(time.Now))
	wall := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	p.Spec.Now = ""
	require.Equal(t, wall, p.Clock(func() time.Time { return wall }))
}

func TestDecodeErrors(t *testing.T) {
	bundle := func(extra string) string {
		return "spec:\n  trustBundles:\n  - name: gw\n    sources: [{secret: {name: ca, namespace: ns}}]\n    target: {name: trust}\n" + extra
	}
	tests := []struct {
		name  string
		spec  string
		field string
		msg   string
	}{
		{"unknown top field", "spec:\n  trustBundle: []\n", "spec.trustBundle", "unknown field"},
		{"unknown nested field with index", bundle("    retain: {maxPrevius: 2}\n"), "spec.trustBundles[0].retain.maxPrevius", "unknown field (known: dropUnusedAfter, for, maxPrevious, protectIssuers)"},
		{"wrong type", bundle("    retain: {maxPrevious: two}\n"), "spec.trustBundles[0].retain.maxPrevious", "must be a whole number"},
		{"fractional number", bundle("    retain: {maxPrevious: 1.5}\n"), "spec.trustBundles[0].retain.maxPrevious", "must be a whole number"},
		{"bool expected", bundle("    retain: {protectIssuers: \"yes\"}\n"), "spec.trustBundles[0].retain.protectIssuers", "must be true or false"},
		{"list expected", "spec:\n  trustBundles: {name: x}\n", "spec.trustBundles", "must be a list"},
		{"bad duration", bundle("    retain: {for: 3 weeks}\n"), "spec.trustBundles[0].retain.for", "invalid duration"},
		{"duration not a string", "spec:\n  expiry: {warnWithin: 5}\n", "spec.expiry.warnWithin", "must be a string"},
		{"negative maxPrevious", bundle("    retain: {maxPrevious: -1}\n"), "spec.trustBundles[0].retain.maxPrevious", "out of range 0..16"},
		{"maxPrevious above cap", bundle("    retain: {maxPrevious: 17}\n"), "spec.trustBundles[0].retain.maxPrevious", "out of range"},
		{"retain.for zero", bundle("    retain: {for: 0s}\n"), "spec.trustBundles[0].retain.for", "must be positive"},
		{"retain.dropUnusedAfter zero", bundle("    retain: {dropUnusedAfter: 0s}\n"), "spec.trustBundles[0].retain.dropUnusedAfter", "must be positive"},
		{"retain.dropUnusedAfter bad duration", bundle("    retain: {dropUnusedAfter: soon}\n"), "spec.trustBundles[0].retain.dropUnusedAfter", "invalid duration"},
		{"bad now", "spec:\n  now: yesterday\n", "spec.now", "RFC 3339"},
		{"fail after warn", "spec:\n  expiry: {warnWithin: 1h, failWithin: 2h}\n", "spec.expiry.failWithin", "longer than warnWithin"},
		{"missing name", "spec:\n  trustBundles:\n  - sources: [{inline: x}]\n    target: {name: t, namespaces: [a]}\n", "spec.trustBundles[0].name", "required"},
		{"bad name", "spec:\n  trustBundles:\n  - name: Gate_Way\n    sources: [{inline: x}]\n    target: {name: t, namespaces: [a]}\n", "spec.trustBundles[0].name", "lowercase DNS name"},
		{"bad mode", bundle("    mode: Merge\n"), "spec.trustBundles[0].mode", "not one of Bundle, Copy"},
		{"no sources", "spec:\n  trustBundles:\n  - name: a\n    sources: []\n    target: {name: t, namespaces: [a]}\n", "spec.trustBundles[0].sources", "at least one"},
		{"two kinds in one source", "spec:\n  trustBundles:\n  - name: a\n    sources: [{inline: x, secret: {name: s}}]\n    target: {name: t, namespaces: [a]}\n", "spec.trustBundles[0].sources[0]", "exactly one"},
		{"source without name", "spec:\n  trustBundles:\n  - name: a\n    sources: [{configMap: {namespace: n}}]\n    target: {name: t}\n", "spec.trustBundles[0].sources[0].configMap.name", "required"},
		{"inline first needs namespaces", "spec:\n  trustBundles:\n  - name: a\n    sources: [{inline: x}]\n    target: {name: t}\n", "spec.trustBundles[0].target.namespaces", "required"},
		{"bad target kind", strings.Replace(bundle(""), "{name: trust}", "{name: trust, kind: Pod}", 1), "spec.trustBundles[0].target.kind", "not one of Secret, ConfigMap"},
		{"source is target", "spec:\n  trustBundles:\n  - name: a\n    sources: [{secret: {name: t, namespace: n}}]\n    target: {name: t}\n", "spec.trustBundles[0].sources[0]", "own target"},
		{"duplicate names", bundle("  - name: gw\n    sources: [{inline: x}]\n    target: {name: other, namespaces: [a]}\n"), "spec.trustBundles[1].name", "duplicate bundle name"},
		{"same target twice", bundle("  - name: gw2\n    sources: [{inline: x}]\n    target: {name: trust, namespaces: [ns]}\n"), "spec.trustBundles[1].target", "also writes"},
		{"bad selector", strings.Replace(bundle(""), "{name: trust}", "{name: trust, namespaceSelector: {matchExpressions: [{key: a, operator: Is}]}}", 1), "spec.trustBundles[0].target.namespaceSelector", "operator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode(t, tt.spec)
			require.Error(t, err)
			fes, ok := err.(FieldErrors)
			require.True(t, ok, "want FieldErrors, got %T", err)
			found := false
			for _, fe := range fes {
				if fe.Field == tt.field && strings.Contains(fe.Err.Error(), tt.msg) {
					found = true
				}
			}
			require.True(t, found, "want an error at %q containing %q, got:\n%v", tt.field, tt.msg, err)
		})
	}
}

func TestDecodeRejectsOtherKinds(t *testing.T) {
	node, err := yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")
	require.NoError(t, err)
	_, err = Decode(node)
	require.ErrorContains(t, err, "functionConfig is v1 ConfigMap")
	_, err = Decode(nil)
	require.ErrorContains(t, err, "no functionConfig")
}

// Found by FuzzDecode: kyaml panics when asked for the kind of a list or
// scalar; a functionConfig of the wrong shape must be a clear error.
func TestDecodeRejectsNonObjectConfig(t *testing.T) {
	for _, text := range []string{"[{}]", "- a\n- b\n", "just a string", "42"} {
		t.Run(text, func(t *testing.T) {
			node, err := yaml.Parse(text)
			require.NoError(t, err)
			p, err := Decode(node)
			require.Nil(t, p)
			require.ErrorContains(t, err, "rotate-certs needs a RotationPolicy object")
		})
	}
}
