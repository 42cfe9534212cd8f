package trustbundle_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// backendTLSPolicy is a Gateway API BackendTLSPolicy in namespace shop
// whose CA is ConfigMap trust.
const backendTLSPolicy = `apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: backend, namespace: shop}
spec:
  targetRefs: [{group: "", kind: Service, name: api}]
  validation:
    hostname: api.shop.svc
    caCertificateRefs: [{group: "", kind: ConfigMap, name: other}, {group: "", kind: ConfigMap, name: trust}]
`

// clientTrafficPolicy is an Envoy Gateway ClientTrafficPolicy in namespace
// gw whose client CA is ConfigMap shop/trust.
const clientTrafficPolicy = `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: mtls, namespace: gw}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: eg}]
  tls:
    clientValidation:
      caCertificateRefs: [{kind: ConfigMap, name: trust, namespace: shop}]
`

// Gateway API and Envoy Gateway read a referenced CA only from key ca.crt:
// a bundle whose target they reference under another key writes the
// overlap where they never look, and the render warns on the referencing
// object's field, naming the target and the key.
func TestGatewayReadsOnlyCACrt(t *testing.T) {
	const src = "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n"
	tests := []struct {
		name, target, policy, field string
		warn                        bool
	}{
		{"BackendTLSPolicy, ConfigMap default key", "    target: {kind: ConfigMap, name: trust, namespaces: [shop]}\n", backendTLSPolicy, "spec.validation.caCertificateRefs[1]", true},
		{"BackendTLSPolicy, key ca.crt", "    target: {kind: ConfigMap, name: trust, namespaces: [shop], key: ca.crt}\n", backendTLSPolicy, "", false},
		{"BackendTLSPolicy, a Secret is not the ConfigMap", "    target: {kind: Secret, name: trust, namespaces: [shop], key: bundle.pem}\n", backendTLSPolicy, "", false},
		{"BackendTLSPolicy, another namespace", "    target: {kind: ConfigMap, name: trust, namespaces: [gw]}\n", backendTLSPolicy, "", false},
		{"ClientTrafficPolicy, cross-namespace ref", "    target: {kind: ConfigMap, name: trust, namespaces: [shop]}\n", clientTrafficPolicy, "spec.tls.clientValidation.caCertificateRefs[0]", true},
		{"ClientTrafficPolicy, key ca.crt", "    target: {kind: ConfigMap, name: trust, namespaces: [shop], key: ca.crt}\n", clientTrafficPolicy, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, src+tt.target, parseItems(t, sourceSecret(caNew), tt.policy))
			require.Empty(t, r.errors())
			r.oneWarning(t, "the gateway never reads", tt.warn, tt.field,
				"ConfigMap shop/trust", "key ca-bundle.crt", "set target.key: ca.crt")
		})
	}
}

// A ClientTrafficPolicy reference without a kind names a Secret, in the
// policy's own namespace without a namespace.
func TestClientTrafficPolicyRefDefaultsToSecret(t *testing.T) {
	const ctp = `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: ClientTrafficPolicy
metadata: {name: mtls, namespace: gw}
spec:
  tls:
    clientValidation:
      caCertificateRefs: [{name: trust}]
`
	r := render(t, "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {kind: Secret, name: trust, namespaces: [gw], key: bundle.pem}\n",
		parseItems(t, sourceSecret(caNew), ctp))
	r.oneWarning(t, "the gateway never reads", true, "spec.tls.clientValidation.caCertificateRefs[0]",
		"ClientTrafficPolicy gw/mtls", "Secret gw/trust", "key bundle.pem")
}
