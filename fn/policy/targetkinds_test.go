package policy

import (
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestAddedTargetKind adds a target kind (a made-up cluster-scoped
// TrustAnchor holding PEM at spec.pem) by a row of the target-kind table
// and sees a target of it validated as the table says: its name checked
// as a cluster-scoped object's, the fields of other kinds refused, and
// listed among the kinds an unknown one is not.
func TestAddedTargetKind(t *testing.T) {
	anchor := kube.TargetDescriptor{Kind: "TrustAnchor", Group: "example.com", Versions: []string{"example.com/v1"},
		Store: kube.StoreField, Field: []string{"spec", "pem"}}
	added := kube.NewTargetTable(append(kube.TargetKinds().Rows(), anchor)...)
	cases := []struct {
		name   string
		kinds  kube.TargetTable
		target Target
		want   []string
	}{
		{"shipped table", kube.TargetKinds(), Target{Kind: "TrustAnchor", Name: "roots"},
			[]string{`b.target.kind: "TrustAnchor" is not one of Secret, ConfigMap, ClusterTrustBundle, Bundle`}},
		{"row added", added, Target{Kind: "TrustAnchor", Name: "roots"}, nil},
		{"name required", added, Target{Kind: "TrustAnchor"}, []string{"b.target.name: required"}},
		{"bad name", added, Target{Kind: "TrustAnchor", Name: "Roots"},
			[]string{`b.target.name: "Roots" is not a valid TrustAnchor name: a lowercase DNS subdomain of at most 253 characters`}},
		{"fields of other kinds", added, Target{Kind: "TrustAnchor", Name: "roots", Key: "ca.crt", SignerName: "example.com/x"}, []string{
			"b.target.key: does not apply to a TrustAnchor target, which is one cluster-scoped object",
			"b.target.signerName: applies only to a ClusterTrustBundle target"}},
		{"listed among the kinds", added, Target{Kind: "Trust", Name: "roots"},
			[]string{`b.target.kind: "Trust" is not one of Secret, ConfigMap, ClusterTrustBundle, Bundle, TrustAnchor`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := TrustBundle{Target: tc.target}
			var got []string
			for _, e := range b.validateTargetIn("b", tc.kinds) {
				got = append(got, e.Error())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestTargetTableAgrees: the default keys of the namespaced target kinds
// are the sources' defaults, and every target kind of the shipped table is
// in the schema's order of messages.
func TestTargetTableAgrees(t *testing.T) {
	for _, c := range []struct {
		kind kube.TargetKind
		key  string
	}{{kube.TargetSecret, defaultSecretKey}, {kube.TargetConfigMap, defaultConfigMapKey}} {
		d, ok := kube.TargetKinds().Lookup(c.kind)
		assert.True(t, ok)
		assert.Equal(t, c.key, d.DefaultKey, c.kind)
	}
	assert.Equal(t, []string{"Secret", "ConfigMap", "ClusterTrustBundle", "Bundle"}, kube.TargetKinds().Names())
}

// TestInjectKindsAreClusterScoped: every kind inject accepts is one
// cluster-scoped object of its name (kube.KeyOf drops the namespace
// kustomize may set on it), so that the objects a bundle injects into are
// found by name whatever namespace the input gives them.
func TestInjectKindsAreClusterScoped(t *testing.T) {
	for _, k := range kube.InjectKinds().Rows() {
		n, err := yaml.Parse("apiVersion: " + k.APIVersion() + "\nkind: " + k.Kind + "\nmetadata: {name: x, namespace: ns}\n")
		require.NoError(t, err)
		assert.Equal(t, kube.Key{Kind: k.Kind, Name: "x"}, kube.KeyOf(n), k.Kind)
	}
	assert.Equal(t, []string{kindMutatingWebhookConfiguration, kindValidatingWebhookConfiguration, KindAPIService, KindCustomResourceDefinition},
		kube.InjectKinds().Names(), "the policy's names of the inject kinds are the table's")
}
