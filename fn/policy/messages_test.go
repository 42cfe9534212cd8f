package policy

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestValidateMessagesNameTheRightThing: each problem is reported once, at
// the field that causes it, in words that fit it (review A, finding 13).
func TestValidateMessagesNameTheRightThing(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want FieldErrors
	}{
		{"a namespace listed twice is not a clash with another bundle",
			"spec:\n  trustBundles:\n  - name: a\n    sources: [{secret: {name: s, namespace: ns1}}]\n    target: {name: t, namespaces: [ns1, ns2, ns1]}\n",
			FieldErrors{{Field: "spec.trustBundles[0].target.namespaces[2]", Err: errors.New(`namespace "ns1" is listed twice (also spec.trustBundles[0].target.namespaces[0])`)}}},
		{"an empty source is one error, not also a namespaces one",
			"spec:\n  trustBundles:\n  - name: a\n    sources: [{}]\n    target: {name: t}\n",
			FieldErrors{{Field: "spec.trustBundles[0].sources[0]", Err: errors.New("set exactly one of secret, configMap, inline")}}},
		{"no sources is one error",
			"spec:\n  trustBundles:\n  - name: a\n    sources: []\n    target: {name: t}\n",
			FieldErrors{{Field: "spec.trustBundles[0].sources", Err: errors.New("at least one source is required")}}},
		{"an inline first source still needs namespaces",
			"spec:\n  trustBundles:\n  - name: a\n    sources: [{inline: x}, {secret: {name: s, namespace: n}}]\n    target: {name: t}\n",
			FieldErrors{{Field: "spec.trustBundles[0].target.namespaces", Err: errors.New("required when the first source is inline (or set namespaceSelector)")}}},
		{"namespaces: [] with no namespaceSelector writes nowhere",
			"spec:\n  trustBundles:\n  - name: a\n    sources: [{secret: {name: s, namespace: n}}]\n    target: {name: t, namespaces: []}\n",
			FieldErrors{{Field: "spec.trustBundles[0].target.namespaces", Err: errors.New("is empty and no namespaceSelector is set: the target would be written in no namespace - list namespaces, set namespaceSelector, or leave namespaces out for the first source's namespace")}}},
		{"two bundles on one object still clash",
			"spec:\n  trustBundles:\n  - name: a\n    sources: [{secret: {name: s, namespace: n}}]\n    target: {name: t}\n  - name: b\n    sources: [{secret: {name: s2, namespace: n}}]\n    target: {name: t}\n",
			FieldErrors{{Field: "spec.trustBundles[1].target", Err: errors.New("writes Secret n/t key ca.crt, which spec.trustBundles[0] also writes")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decode(t, tt.spec)
			var got FieldErrors
			require.True(t, errors.As(err, &got), "want FieldErrors, got %v", err)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestDecodeTypeMessages: a RotationPolicy of another apiVersion is told
// about its apiVersion; only a ConfigMap hears about plain ConfigMaps.
func TestDecodeTypeMessages(t *testing.T) {
	tests := []struct {
		head string
		want *kube.FieldError
	}{
		{"apiVersion: rotate-certs.dev/v1\nkind: RotationPolicy\n",
			&kube.FieldError{Field: "apiVersion", Err: errors.New(`"rotate-certs.dev/v1" is not an apiVersion of RotationPolicy this rotate-certs reads; use rotate-certs.dev/v1alpha1`)}},
		{"kind: RotationPolicy\n",
			&kube.FieldError{Field: "apiVersion", Err: errors.New(`"" is not an apiVersion of RotationPolicy this rotate-certs reads; use rotate-certs.dev/v1alpha1`)}},
		{"apiVersion: v1\nkind: ConfigMap\n",
			&kube.FieldError{Field: "kind", Err: fmt.Errorf("%w; rotate-certs needs kind RotationPolicy, apiVersion rotate-certs.dev/v1alpha1 (a plain ConfigMap cannot carry the policy's structure)", ErrConfigMapFunctionConfig)}},
		{"apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicies\n",
			&kube.FieldError{Field: "kind", Err: errors.New("functionConfig is rotate-certs.dev/v1alpha1 RotationPolicies; rotate-certs needs kind RotationPolicy, apiVersion rotate-certs.dev/v1alpha1")}},
	}
	for _, tt := range tests {
		t.Run(tt.head, func(t *testing.T) {
			node, err := yaml.Parse(tt.head + "metadata: {name: p}\nspec: {}\n")
			require.NoError(t, err)
			_, err = Decode(node)
			require.Equal(t, FieldErrors{tt.want}, err)
		})
	}
}
