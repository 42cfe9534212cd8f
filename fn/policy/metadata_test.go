package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func metadataPolicy(metadata string) string {
	return `spec:
  trustBundles:
  - name: gw
    sources: [{secret: {name: ca, namespace: gw}}]
    target:
      name: trust
      metadata: ` + metadata + "\n"
}

func TestTargetMetadataDecodes(t *testing.T) {
	p, err := decode(t, metadataPolicy(`{labels: {app.kubernetes.io/part-of: gateway, reloader: "", tier: edge-1}, annotations: {argocd.argoproj.io/sync-options: "Replace=true", note: "any text: even / and spaces"}}`))
	require.NoError(t, err)
	m := p.Spec.TrustBundles[0].Target.Metadata
	require.Equal(t, map[string]string{"app.kubernetes.io/part-of": "gateway", "reloader": "", "tier": "edge-1"}, m.Labels)
	require.Equal(t, "Replace=true", m.Annotations["argocd.argoproj.io/sync-options"])
}

func TestTargetMetadataErrors(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, tc := range []struct {
		name, metadata, field, msg string
	}{
		{"unknown field", `{labels: {a: b}, owner: me}`, "spec.trustBundles[0].target.metadata.owner", "unknown field"},
		{"labels not a map", `{labels: [a]}`, "spec.trustBundles[0].target.metadata.labels", "must be an object"},
		{"label value not a string", `{labels: {a: {b: c}}}`, "spec.trustBundles[0].target.metadata.labels.a", "must be a string"},
		{"label key with a space", `{labels: {"bad key": x}}`, "spec.trustBundles[0].target.metadata.labels[bad key]", "not a valid label key"},
		{"label key prefix upper case", `{labels: {Example.com/a: x}}`, "spec.trustBundles[0].target.metadata.labels[Example.com/a]", "lowercase DNS subdomain"},
		{"label key name too long", `{labels: {` + long + `: x}}`, "spec.trustBundles[0].target.metadata.labels[" + long + "]", "longer than 63"},
		{"label key empty prefix", `{labels: {/a: x}}`, "spec.trustBundles[0].target.metadata.labels[/a]", "prefix before '/'"},
		{"label value too long", `{labels: {a: ` + long + `}}`, "spec.trustBundles[0].target.metadata.labels[a]", "not a valid label value"},
		{"label value with a slash", `{labels: {a: x/y}}`, "spec.trustBundles[0].target.metadata.labels[a]", "not a valid label value"},
		{"label value ends with a dash", `{labels: {a: x-}}`, "spec.trustBundles[0].target.metadata.labels[a]", "not a valid label value"},
		{"annotation key invalid", `{annotations: {"-a": x}}`, "spec.trustBundles[0].target.metadata.annotations[-a]", "not a valid annotation key"},
		{"annotation owned by rotate-certs", `{annotations: {rotate-certs.dev/retired: x}}`, "spec.trustBundles[0].target.metadata.annotations[rotate-certs.dev/retired]", "reserved prefix rotate-certs.dev/"},
		{"annotation steering kpt", `{annotations: {config.kubernetes.io/local-config: "true"}}`, "spec.trustBundles[0].target.metadata.annotations[config.kubernetes.io/local-config]", "kpt and kustomize"},
		{"annotations too large", `{annotations: {a: "` + strings.Repeat("x", 256*1024) + `"}}`, "spec.trustBundles[0].target.metadata.annotations", "256 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode(t, metadataPolicy(tc.metadata))
			require.Error(t, err)
			fe := err.(FieldErrors)
			require.Len(t, fe, 1, "%v", err)
			require.Equal(t, tc.field, fe[0].Field)
			require.Contains(t, fe[0].Err.Error(), tc.msg)
		})
	}
}
