package main

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// A bundle that would inject into cert-manager's own webhook (cainjector
// writes its caBundle) or write a ConfigMap a trust-manager Bundle writes
// fails the function: exit 1, no output resources, the error on stderr
// naming the annotation or the Bundle.
func TestCLIRefusesToFightCertManager(t *testing.T) {
	policy := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    now: "2026-11-22T00:00:00Z"
    trustBundles:
    - name: corp
      sources: [{secret: {name: corp-ca, namespace: cert-manager, key: ca.crt}}]
      %s
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: corp-ca, namespace: cert-manager}
  data: {ca.crt: ` + secretValue(t, "ca-2026") + `}
- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingWebhookConfiguration
  metadata:
    name: cert-manager-webhook
    annotations: {cert-manager.io/inject-ca-from-secret: "cert-manager/cert-manager-webhook-ca"}
  webhooks:
  - name: webhook.cert-manager.io
    admissionReviewVersions: ["v1"]
    sideEffects: None
    clientConfig: {service: {name: cert-manager-webhook, namespace: cert-manager, path: /validate}}
- apiVersion: trust.cert-manager.io/v1alpha1
  kind: Bundle
  metadata: {name: corp-trust}
  spec:
    sources: [{secret: {name: corp-ca, key: ca.crt}}]
    target: {configMap: {key: ca.crt}}
`
	for name, tc := range map[string]struct{ target, want string }{
		"cainjector": {"inject: [{kind: ValidatingWebhookConfiguration, name: cert-manager-webhook}]",
			"is annotated cert-manager.io/inject-ca-from-secret"},
		"trust-manager": {"target: {kind: ConfigMap, name: corp-trust, namespaces: [apps], key: ca.crt}",
			"is also written by trust-manager Bundle corp-trust"},
	} {
		t.Run(name, func(t *testing.T) {
			in := strings.Replace(policy, "%s", tc.target, 1)
			out, stderr, code := runCLI(t, in)
			require.Equal(t, 1, code, "stdout: %s stderr: %s", out, stderr)
			require.Contains(t, stderr, tc.want)
			require.Contains(t, out, "items: []", "no output resources")
			require.Contains(t, out, "severity: error")
		})
	}
}

// secretValue is the base64 PEM of a fixture, for a Secret's data.
func secretValue(t *testing.T, name string) string {
	t.Helper()
	b, err := testpki.ExpandTemplate(name, `{{b64 "`+name+`"}}`)
	require.NoError(t, err)
	return string(b)
}
