package kube

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestNearest(t *testing.T) {
	secret := func(ns, name string) Key { return Key{Kind: "Secret", Namespace: ns, Name: name} }
	have := []Key{
		secret("envoy-gateway-system", "envoy-gateway"),
		secret("envoy-gateway-system", "ratelimit-client"),
		secret("default", "envoy-gateway"),
		secret("other", "envoy-gatewax"),
		{Kind: "ConfigMap", Namespace: "envoy-gateway-system", Name: "envoy-gatway"},
	}
	for _, tc := range []struct {
		want Key
		got  Key
		ok   bool
	}{
		{secret("gw", "envoy-gateway"), secret("default", "envoy-gateway"), true},                               // same name, another namespace
		{secret("envoy-gateway-system", "envoy-gatway"), secret("envoy-gateway-system", "envoy-gateway"), true}, // a typo, in its namespace first
		{secret("elsewhere", "ratelimit-clinet"), secret("envoy-gateway-system", "ratelimit-client"), true},     // a typo in another namespace
		{secret("envoy-gateway-system", "totally-different"), Key{}, false},                                     // nothing near
		{Key{Kind: "ConfigMap", Namespace: "x", Name: "ratelimit-client"}, Key{}, false},                        // another kind is no match
	} {
		got, ok := Nearest(tc.want, have)
		require.Equal(t, tc.ok, ok, "%v", tc.want)
		require.Equal(t, tc.got, got, "%v", tc.want)
	}
	require.Equal(t, 0, distance("abc", "abc"))
	require.Equal(t, 1, distance("envoy-gateway", "envoy-gatway"))
	require.Equal(t, 3, distance("kitten", "sitting"))
}

func TestKeys(t *testing.T) {
	n, err := yaml.Parse("kind: Secret\ndata:\n  tls.crt: eA==\n  ca.crt: eA==\nstringData:\n  ca.crt: x\n  extra: y\n")
	require.NoError(t, err)
	require.Equal(t, []string{"ca.crt", "extra", "tls.crt"}, Keys(n))
	require.Equal(t, "keys ca.crt, extra, tls.crt", KeyList(Keys(n)))
	require.Equal(t, "no data", KeyList(nil))
	require.Equal(t, "key a", KeyList([]string{"a"}))
}
