package trustbundle_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/require"
)

// cainjectedWebhook is a webhook configuration annotated for cert-manager's
// cainjector, with its current caBundle.
func cainjectedWebhook(annotations string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: hooks
  annotations: {` + annotations + `}
webhooks:
- name: a.example.com
  clientConfig:
    service: {name: hook, namespace: gw}
    caBundle: ` + b64(caOld) + `
`
}

// TestInjectingWhereCAInjectorWritesIsAnError: each of cainjector's three
// annotations makes the object cainjector's, whether the policy's inject
// list or the object's own rotate-certs annotation asks for the injection:
// an error naming the annotation and both ways out, and the caBundle is
// left as it was.
func TestInjectingWhereCAInjectorWritesIsAnError(t *testing.T) {
	for _, ann := range []struct{ key, value string }{
		{certmanager.InjectCAFrom, "gw/hook-cert"},
		{certmanager.InjectCAFromSecret, "gw/hook-ca"},
		{certmanager.InjectAPIServerCA, "true"},
	} {
		for _, path := range []struct{ name, bundle, annotations, way string }{
			{"inject list", injectBundle, "", "remove spec.trustBundles[0].inject[0] from the bundle's inject list"},
			{"rotate-certs annotation", "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n",
				policy.InjectAnnotation + ": gw, ", "remove the object's " + policy.InjectAnnotation + ": gw annotation"},
		} {
			t.Run(ann.key+"/"+path.name, func(t *testing.T) {
				hook := cainjectedWebhook(fmt.Sprintf("%s%s: %q", path.annotations, ann.key, ann.value))
				r := render(t, path.bundle, parseItems(t, sourceSecret(caNew), hook))
				errs := r.matching("cert-manager's cainjector writes its caBundle")
				require.Len(t, errs, 1, "%v", r.results)
				e := errs[0]
				require.Equal(t, "error", string(e.Severity))
				require.Equal(t, "metadata.annotations["+ann.key+"]", e.Field.Path)
				require.Equal(t, "hooks", e.ResourceRef.Name)
				require.Contains(t, e.Message, "is annotated "+ann.key)
				require.Contains(t, e.Message, "remove the "+ann.key+" annotation to let rotate-certs own the caBundle")
				require.Contains(t, e.Message, path.way+" to leave it to cainjector")
				require.Equal(t, []string{"old"}, caBundleAt(t, r.items[1], 0), "the caBundle is left as it was")
			})
		}
	}
	// inject-apiserver-ca: "false" leaves the caBundle to whoever writes it.
	r := render(t, injectBundle, parseItems(t, sourceSecret(caNew), cainjectedWebhook(certmanager.InjectAPIServerCA+`: "false"`)))
	require.Empty(t, r.matching("cainjector"))
	require.Equal(t, []string{"new", "old"}, caBundleAt(t, r.items[1], 0))
}

// certManagerWebhook is the ValidatingWebhookConfiguration cert-manager's
// Helm chart (v1.21, deploy/charts/cert-manager
// webhook-validating-webhook.yaml) renders for release cert-manager in
// namespace cert-manager: cainjector fills its caBundle from the webhook's
// own CA Secret.
const certManagerWebhook = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: cert-manager-webhook
  labels:
    app: webhook
    app.kubernetes.io/name: webhook
    app.kubernetes.io/instance: cert-manager
    app.kubernetes.io/component: "webhook"
    app.kubernetes.io/version: "v1.21.1"
  annotations:
    cert-manager.io/inject-ca-from-secret: "cert-manager/cert-manager-webhook-ca"
webhooks:
  - name: webhook.cert-manager.io
    rules:
      - apiGroups:
          - "cert-manager.io"
          - "acme.cert-manager.io"
        apiVersions:
          - "v1"
        operations:
          - CREATE
          - UPDATE
        resources:
          - "*/*"
    admissionReviewVersions: ["v1"]
    matchPolicy: Equivalent
    timeoutSeconds: 30
    failurePolicy: Fail
    sideEffects: None
    clientConfig:
      service:
        name: cert-manager-webhook
        namespace: cert-manager
        path: /validate
`

// TestInjectingIntoCertManagersOwnWebhookIsAnError: cert-manager's own
// webhook, as its chart ships it, is cainjector's.
func TestInjectingIntoCertManagersOwnWebhookIsAnError(t *testing.T) {
	bundle := "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n    inject: [{kind: ValidatingWebhookConfiguration, name: cert-manager-webhook}]\n"
	r := render(t, bundle, parseItems(t, sourceSecret(caNew), certManagerWebhook))
	errs := r.matching("ValidatingWebhookConfiguration cert-manager-webhook is annotated cert-manager.io/inject-ca-from-secret: \"cert-manager/cert-manager-webhook-ca\"")
	require.Len(t, errs, 1, "%v", r.results)
	require.Equal(t, "metadata.annotations[cert-manager.io/inject-ca-from-secret]", errs[0].Field.Path)
	require.NotContains(t, r.items[1].MustString(), "caBundle", "nothing is written into it")
}

// corpTrustBundle is a trust-manager Bundle named corp-trust writing
// key ca.crt of a ConfigMap, with target extra (a namespaceSelector).
func corpTrustBundle(extra string) string {
	return `apiVersion: trust.cert-manager.io/v1alpha1
kind: Bundle
metadata: {name: corp-trust}
spec:
  sources: [{useDefaultCAs: false}, {secret: {name: corp-ca, key: ca.crt}}]
  target:
    configMap: {key: ca.crt}
` + extra
}

// TestTargetATrustManagerBundleWritesIsAnError: a Secret or ConfigMap
// target that a trust-manager Bundle of the input also writes - its name,
// a key it writes, a namespace it selects - is an error naming the Bundle
// and the ways out; any other name, key, kind or namespace is not.
func TestTargetATrustManagerBundleWritesIsAnError(t *testing.T) {
	apps := "apiVersion: v1\nkind: Namespace\nmetadata: {name: apps, labels: {trust: corp}}\n"
	for _, tt := range []struct {
		name, target, selector string
		clash                  bool
	}{
		{"every namespace, no selector", "{kind: ConfigMap, name: corp-trust, namespaces: [apps], key: ca.crt}", "", true},
		{"a selector that matches the Namespace's labels", "{kind: ConfigMap, name: corp-trust, namespaces: [apps], key: ca.crt}",
			"    namespaceSelector: {matchLabels: {trust: corp}}\n", true},
		{"a selector on the name label the API server sets", "{kind: ConfigMap, name: corp-trust, namespaces: [billing], key: ca.crt}",
			"    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: billing}}\n", true},
		{"a selector that does not match", "{kind: ConfigMap, name: corp-trust, namespaces: [apps], key: ca.crt}",
			"    namespaceSelector: {matchLabels: {trust: other}}\n", false},
		{"another key", "{kind: ConfigMap, name: corp-trust, namespaces: [apps], key: bundle.pem}", "", false},
		{"another name", "{kind: ConfigMap, name: apps-trust, namespaces: [apps], key: ca.crt}", "", false},
		{"a Secret where the Bundle writes ConfigMaps", "{kind: Secret, name: corp-trust, namespaces: [apps], key: ca.crt}", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bundle := "  - name: corp\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: " + tt.target + "\n"
			r := render(t, bundle, parseItems(t, sourceSecret(caNew), apps, corpTrustBundle(tt.selector)))
			errs := r.matching("is also written by trust-manager")
			if !tt.clash {
				require.Empty(t, errs)
				require.Empty(t, r.errors())
				return
			}
			require.Len(t, errs, 1, "%v", r.results)
			e := errs[0]
			require.Equal(t, "Bundle", e.ResourceRef.Kind)
			require.Equal(t, "corp-trust", e.ResourceRef.Name)
			require.Equal(t, "spec.target.configMap", e.Field.Path)
			require.Contains(t, e.Message, "Bundle corp-trust")
			require.Contains(t, e.Message, "set the target to kind: Bundle, name: corp-trust")
			require.Contains(t, e.Message, "give the target another name or key")
			require.Empty(t, r.rendered[0].Targets, "nothing is written")
			for _, it := range r.items {
				require.False(t, strings.Contains(it.MustString(), "rotate-certs.dev/bundle-hash"), "no target written")
			}
		})
	}
}
