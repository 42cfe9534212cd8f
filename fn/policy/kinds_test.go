package policy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecodeClusterScopedTargets(t *testing.T) {
	p, err := decode(t, `spec:
  trustBundles:
  - name: ctb
    sources: [{secret: {name: ca, namespace: gw}}]
    target: {kind: ClusterTrustBundle, name: "example.com:gateway:v1", signerName: example.com/gateway}
  - name: tm
    target: {kind: Bundle, name: corp-trust}
  - name: hooks
    sources: [{secret: {name: ca, namespace: gw}}]
    inject:
    - {kind: MutatingWebhookConfiguration, name: topology-injector}
    - {kind: ValidatingWebhookConfiguration, name: x, webhooks: [a.example.com]}
`)
	require.NoError(t, err)
	ctb := p.Spec.TrustBundles[0].Target
	require.Empty(t, ctb.Key, "a ClusterTrustBundle has no data key")
	require.Empty(t, ctb.Namespaces, "a cluster-scoped target has no namespaces")
	require.False(t, ctb.namespaced())
	tm := p.Spec.TrustBundles[1].Target
	require.Equal(t, DefaultTrustNamespace, tm.TrustNamespace)
	hooks := p.Spec.TrustBundles[2]
	require.True(t, hooks.Target.IsZero(), "a bundle that only injects keeps a zero target")
	require.False(t, hooks.HasObject())
	require.Equal(t, []string{"a.example.com"}, hooks.Inject[1].Webhooks)
}

func TestValidateTargetKindsAndInject(t *testing.T) {
	src := "    sources: [{secret: {name: ca, namespace: gw}}]\n"
	tests := []struct {
		name string
		spec string
		want FieldErrors
	}{
		{"signerName prefix",
			src + "    target: {kind: ClusterTrustBundle, name: gateway-v1, signerName: example.com/gateway}\n",
			FieldErrors{{Field: "spec.trustBundles[0].target.name", Err: errors.New(`"gateway-v1" does not start with "example.com:gateway:": the name of a ClusterTrustBundle with signerName example.com/gateway must be example.com:gateway:<suffix> (the API server rejects any other)`)}}},
		{"signerName with an empty suffix",
			src + "    target: {kind: ClusterTrustBundle, name: \"example.com:gateway:\", signerName: example.com/gateway}\n",
			FieldErrors{{Field: "spec.trustBundles[0].target.name", Err: errors.New(`"example.com:gateway:": the part after "example.com:gateway:" must be a lowercase DNS subdomain, such as example.com:gateway:v1`)}}},
		{"a colon without signerName",
			src + "    target: {kind: ClusterTrustBundle, name: \"example.com:gateway:v1\"}\n",
			FieldErrors{{Field: "spec.trustBundles[0].target.name", Err: errors.New(`"example.com:gateway:v1" contains ':', which only the name of a ClusterTrustBundle with a signerName may hold (set target.signerName, or drop the ':')`)}}},
		{"malformed signerName",
			src + "    target: {kind: ClusterTrustBundle, name: \"gateway:v1\", signerName: gateway}\n",
			FieldErrors{{Field: "spec.trustBundles[0].target.signerName", Err: errors.New(`"gateway" is not of the form example.com/signer-name (exactly one '/')`)}}},
		{"signerName domain of one label",
			src + "    target: {kind: ClusterTrustBundle, name: \"gateway:x:v1\", signerName: gateway/x}\n",
			FieldErrors{{Field: "spec.trustBundles[0].target.signerName", Err: errors.New(`"gateway/x" has domain "gateway"; it must be a DNS name of at least two labels, at most 253 characters`)}}},
		{"namespaced fields on a cluster-scoped target",
			src + "    target: {kind: ClusterTrustBundle, name: gw, namespaces: [a], key: ca.crt, trustNamespace: x}\n",
			FieldErrors{
				{Field: "spec.trustBundles[0].target.namespaces", Err: errors.New("does not apply to a ClusterTrustBundle target, which is one cluster-scoped object")},
				{Field: "spec.trustBundles[0].target.key", Err: errors.New("does not apply to a ClusterTrustBundle target, which is one cluster-scoped object")},
				{Field: "spec.trustBundles[0].target.trustNamespace", Err: errors.New("applies only to a Bundle (trust-manager) target")},
			}},
		{"signerName on a Secret",
			src + "    target: {name: t, signerName: example.com/x}\n",
			FieldErrors{{Field: "spec.trustBundles[0].target.signerName", Err: errors.New("does not apply to a Secret target")}}},
		{"a Bundle target reads the Bundle's sources",
			src + "    target: {kind: Bundle, name: corp}\n",
			FieldErrors{{Field: "spec.trustBundles[0].sources", Err: errors.New("must be empty for a Bundle target: rotate-certs reads the trust-manager Bundle's own spec.sources (the Secrets and ConfigMaps of its trust namespace, and its inLine sources), which stay the one list of what is trusted")}}},
		{"two bundles on one ClusterTrustBundle",
			src + "    target: {kind: ClusterTrustBundle, name: gw}\n  - name: b\n" + src + "    target: {kind: ClusterTrustBundle, name: gw}\n",
			FieldErrors{{Field: "spec.trustBundles[1].target", Err: errors.New("writes ClusterTrustBundle gw, which spec.trustBundles[0] also writes")}}},
		{"an unknown inject kind and webhooks on an APIService",
			src + "    inject: [{kind: Service, name: x}, {kind: APIService, name: v1.x, webhooks: [a]}]\n",
			FieldErrors{
				{Field: "spec.trustBundles[0].inject[0].kind", Err: errors.New(`"Service" is not one of APIService, CustomResourceDefinition, MutatingWebhookConfiguration, ValidatingWebhookConfiguration`)},
				{Field: "spec.trustBundles[0].inject[1].webhooks", Err: errors.New("applies only to a MutatingWebhookConfiguration or ValidatingWebhookConfiguration")},
			}},
		{"one object twice in a bundle",
			src + "    inject: [{kind: APIService, name: v1.x}, {kind: APIService, name: v1.x}]\n",
			FieldErrors{{Field: "spec.trustBundles[0].inject[1]", Err: errors.New("APIService v1.x is listed twice (also spec.trustBundles[0].inject[0]); list its webhooks in one entry")}}},
		{"two bundles inject one webhook",
			src + "    inject: [{kind: MutatingWebhookConfiguration, name: m, webhooks: [a, b]}]\n  - name: b\n" + src +
				"    inject: [{kind: MutatingWebhookConfiguration, name: m, webhooks: [c]}, {kind: ValidatingWebhookConfiguration, name: v}]\n  - name: c\n" + src +
				"    inject: [{kind: MutatingWebhookConfiguration, name: m, webhooks: [b]}, {kind: ValidatingWebhookConfiguration, name: v, webhooks: [x]}]\n",
			FieldErrors{
				{Field: "spec.trustBundles[2].inject[0]", Err: errors.New("injects into MutatingWebhookConfiguration m (webhooks b), which spec.trustBundles[0].inject[0] also injects into: each render would overwrite the other's CAs - give each bundle its own webhooks")},
				{Field: "spec.trustBundles[2].inject[1]", Err: errors.New("injects into ValidatingWebhookConfiguration v (webhooks x), which spec.trustBundles[1].inject[1] also injects into: each render would overwrite the other's CAs - give each bundle its own webhooks")},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode(t, "spec:\n  trustBundles:\n  - name: a\n"+tt.spec)
			var got FieldErrors
			require.True(t, errors.As(err, &got), "want FieldErrors, got %v", err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestClusterTrustBundleNamesTheAPIAccepts(t *testing.T) {
	for _, tt := range []struct{ name, signer string }{
		{"example.com:gateway:v1", "example.com/gateway"},
		{"example.com:a.b:x.y", "example.com/a.b"},
		{"gateway-roots", ""},
	} {
		require.Empty(t, validateClusterTrustBundleName(tt.name, tt.signer, "t"), "%s %s", tt.name, tt.signer)
	}
}

// TestEmptyNamespacesWithASelector: namespaces: [] with a
// namespaceSelector is no implicit namespace (only the selected ones);
// namespaces left out is the first source's, selector or not.
func TestEmptyNamespacesWithASelector(t *testing.T) {
	for _, tt := range []struct {
		name, target string
		want         []string
	}{
		{"empty list and a selector", "{name: t, namespaces: [], namespaceSelector: {matchLabels: {trust: on}}}", []string{}},
		{"absent, with a selector", "{name: t, namespaceSelector: {matchLabels: {trust: on}}}", []string{"src"}},
		{"absent", "{name: t}", []string{"src"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := decode(t, "spec:\n  trustBundles:\n  - name: a\n    sources: [{secret: {name: s, namespace: src}}]\n    target: "+tt.target+"\n")
			require.NoError(t, err)
			require.Equal(t, tt.want, p.Spec.TrustBundles[0].Target.Namespaces)
		})
	}
}
