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

// envoyBackend is an Envoy Gateway Backend in namespace shop whose
// backend's serving certificate is validated with ConfigMap trust
// (spec.tls.caCertificateRefs, Gateway API LocalObjectReferences).
const envoyBackend = `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: Backend
metadata: {name: api, namespace: shop}
spec:
  endpoints: [{fqdn: {hostname: api.shop.svc.cluster.local, port: 443}}]
  tls:
    caCertificateRefs: [{group: "", kind: ConfigMap, name: trust}]
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
		{"Envoy Gateway Backend, ConfigMap default key", "    target: {kind: ConfigMap, name: trust, namespaces: [shop]}\n", envoyBackend, "spec.tls.caCertificateRefs[0]", true},
		{"Envoy Gateway Backend, another namespace", "    target: {kind: ConfigMap, name: trust, namespaces: [gw]}\n", envoyBackend, "", false},
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

// frontendGateway is a Gateway API Gateway (v1.5 standard channel; v1.4
// experimental) in namespace gw that validates client certificates: by
// default against ConfigMap gw/trust, on port 8443 against ConfigMap
// gw/client-ca, and on port 9443 against Secret gw/trust and ConfigMap
// shop/trust (another namespace, which a ReferenceGrant allows).
const frontendGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: gw}
spec:
  gatewayClassName: eg
  tls:
    frontend:
      default:
        validation:
          caCertificateRefs: [{kind: ConfigMap, group: "", name: trust}]
      perPort:
      - port: 8443
        tls:
          validation:
            caCertificateRefs: [{kind: ConfigMap, group: "", name: client-ca}]
      - port: 9443
        tls:
          validation:
            caCertificateRefs: [{kind: Secret, group: "", name: trust}, {kind: ConfigMap, group: "", name: trust, namespace: shop}]
            mode: AllowInsecureFallback
  listeners:
  - name: https
    protocol: HTTPS
    port: 443
    tls:
      certificateRefs: [{kind: Secret, group: "", name: eg-cert}]
  - name: partners
    protocol: HTTPS
    port: 9443
    hostname: partners.example.com
    tls:
      certificateRefs: [{kind: Secret, group: "", name: partners-cert}]
`

// listenerGateway is a Gateway of Gateway API v1.1 to v1.3's experimental
// channel in namespace gw whose second listener validates client
// certificates against ConfigMap gw/trust.
const listenerGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: legacy, namespace: gw}
spec:
  gatewayClassName: eg
  listeners:
  - name: foo-https
    protocol: HTTPS
    port: 443
    hostname: foo.example.com
    tls:
      certificateRefs: [{kind: Secret, group: "", name: foo-cert}]
      frontendValidation:
        caCertificateRefs: [{kind: ConfigMap, group: "", name: client-ca}]
  - name: bar-https
    protocol: HTTPS
    port: 8443
    hostname: bar.example.com
    tls:
      certificateRefs: [{kind: Secret, group: "", name: bar-cert}]
      frontendValidation:
        caCertificateRefs: [{kind: ConfigMap, group: "", name: trust}]
`

// A Gateway's own client certificate validation reads ca.crt of each
// reference, wherever the reference is (spec.tls.frontend.default,
// spec.tls.frontend.perPort[], spec.listeners[].tls.frontendValidation):
// each reference to the target warns on its own field; one to another
// object, or to a target written to ca.crt, does not.
func TestGatewayFrontendReadsOnlyCACrt(t *testing.T) {
	const src = "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n"
	tests := []struct {
		name, target, gateway, field, object string
	}{
		{"frontend default, the Gateway's namespace", "    target: {kind: ConfigMap, name: trust, namespaces: [gw]}\n", frontendGateway,
			"spec.tls.frontend.default.validation.caCertificateRefs[0]", "ConfigMap gw/trust"},
		{"frontend perPort, another namespace", "    target: {kind: ConfigMap, name: trust, namespaces: [shop]}\n", frontendGateway,
			"spec.tls.frontend.perPort[1].tls.validation.caCertificateRefs[1]", "ConfigMap shop/trust"},
		{"frontend perPort, a Secret", "    target: {kind: Secret, name: trust, namespaces: [gw], key: bundle.pem}\n", frontendGateway,
			"spec.tls.frontend.perPort[1].tls.validation.caCertificateRefs[0]", "Secret gw/trust"},
		{"frontend, key ca.crt", "    target: {kind: ConfigMap, name: trust, namespaces: [gw, shop], key: ca.crt}\n", frontendGateway, "", ""},
		{"frontend, an object no reference names", "    target: {kind: ConfigMap, name: other, namespaces: [gw, shop]}\n", frontendGateway, "", ""},
		{"listener frontendValidation", "    target: {kind: ConfigMap, name: trust, namespaces: [gw]}\n", listenerGateway,
			"spec.listeners[1].tls.frontendValidation.caCertificateRefs[0]", "ConfigMap gw/trust"},
		{"listener frontendValidation, key ca.crt", "    target: {kind: ConfigMap, name: trust, namespaces: [gw], key: ca.crt}\n", listenerGateway, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, src+tt.target, parseItems(t, sourceSecret(caNew), tt.gateway))
			require.Empty(t, r.errors())
			r.oneWarning(t, "the gateway never reads", tt.field != "", tt.field,
				"Gateway gw/", tt.field, tt.object, "set target.key: ca.crt")
		})
	}
}
