package certmanager

import (
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestReadBundleSources: the secret and configMap sources of a Bundle,
// named or selecting by label, in order, with their position; the inLine
// and default CA sources, and a source with neither a name nor a selector
// that decodes (which the render refuses), are not among them.
func TestReadBundleSources(t *testing.T) {
	node := yaml.MustParse(`apiVersion: trust.cert-manager.io/v1alpha1
kind: Bundle
metadata: {name: corp-trust}
spec:
  sources:
  - useDefaultCAs: true
  - secret: {name: root-ca, key: ca.crt}
  - secret:
      selector:
        matchLabels: {corp.example.com/root: "true"}
        matchExpressions: [{key: stage, operator: NotIn, values: [retired]}]
      key: ca.crt
  - configMap: {selector: {}, includeAllKeys: true}
  - secret: {selector: {matchExpressions: [{key: a, operator: Near}]}, key: ca.crt}
  - configMap: {selector: roots, key: ca.crt}
  - inLine: "x"
`)
	sel := kube.Selector{MatchLabels: map[string]string{"corp.example.com/root": "true"},
		MatchExpressions: []kube.Requirement{{Key: "stage", Operator: "NotIn", Values: []string{"retired"}}}}
	require.Equal(t, []BundleSource{
		{Index: 1, Kind: "Secret", Name: "root-ca", Key: "ca.crt"},
		{Index: 2, Kind: "Secret", Selector: &sel, Key: "ca.crt"},
		{Index: 3, Kind: "ConfigMap", Selector: &kube.Selector{}, AllKeys: true},
	}, ReadBundleSources(node))
}

// TestSourceSelector decodes a source's selector through JSON, as the API
// server does, and refuses a source without one.
func TestSourceSelector(t *testing.T) {
	for _, tc := range []struct{ source, want, err string }{
		{`{selector: {matchLabels: {a: b}}, key: ca.crt}`, "a=b", ""},
		{`{selector: {}, key: ca.crt}`, "", ""},
		{`{selector: {matchExpressions: [{key: a, operator: Near}]}}`, "", "operator"},
		{`{selector: roots}`, "", "a source needs a name or a selector"},
		{`{key: ca.crt}`, "", "a source needs a name or a selector"},
	} {
		s, err := SourceSelector(yaml.MustParse(tc.source))
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.source)
			continue
		}
		require.NoError(t, err, tc.source)
		require.Equal(t, tc.want, s.String(), tc.source)
	}
}
