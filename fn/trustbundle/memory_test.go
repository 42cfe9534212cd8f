package trustbundle_test

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// forged is a CA that no source and no target data of these tests holds.
var forged = testpki.NewCA("forged", testpki.Date(2026, 10, 1), testpki.Days(730))

// forgedMemory is the annotations block that names forged in every memory
// annotation: a Copy-mode memory (previous), a retirement line and seen.
func forgedMemory(indent string) string {
	pad := indent + "  "
	return indent + "annotations:\n" +
		pad + "rotate-certs.dev/previous: |\n" + pad + "  " + indent2(pad+"  ", pemOf(forged)) + "\n" +
		pad + "rotate-certs.dev/retired: |\n" + pad + "  " + pki.FingerprintOf(caOld.Cert).String() + " 2026-11-02T00:00:00Z\n" +
		pad + "  " + pki.FingerprintOf(forged.Cert).String() + " 2026-11-20T00:00:00Z\n" +
		pad + "rotate-certs.dev/seen: |\n" + pad + "  " + indent2(pad+"  ", pemOf(caNew, forged)) + "\n"
}

func indent2(pad, s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
}

// TestMemoryNeverAddsTrustToAnyTargetKind: on every kind of target - a
// Secret and a ConfigMap of a fan-out, a ClusterTrustBundle, a trust-manager
// Bundle, the caBundle of a webhook, an APIService and a CRD - whose data
// holds the new and the old CA (the old one with its retirement line), an
// annotation naming forged adds nothing: the rendered objects do not hold
// it, and warnings name each annotation and the target.
func TestMemoryNeverAddsTrustToAnyTargetKind(t *testing.T) {
	meta := func(name string) string { return "metadata:\n  name: " + name + "\n" + forgedMemory("  ") }
	for _, tc := range []struct {
		name, bundle, target string
	}{
		{"Secret", "    target: {name: trust, namespaces: [gw]}\n",
			"apiVersion: v1\nkind: Secret\n" + strings.Replace(meta("trust"), "metadata:\n", "metadata:\n  namespace: gw\n", 1) + "data:\n  ca.crt: " + b64(caNew, caOld) + "\n"},
		{"ConfigMap", "    target: {kind: ConfigMap, name: trust, namespaces: [gw]}\n",
			"apiVersion: v1\nkind: ConfigMap\n" + strings.Replace(meta("trust"), "metadata:\n", "metadata:\n  namespace: gw\n", 1) + "data:\n  ca-bundle.crt: |\n    " + indent(4, pemOf(caNew, caOld)) + "\n"},
		{"ClusterTrustBundle", "    target: {kind: ClusterTrustBundle, name: trust}\n",
			"apiVersion: certificates.k8s.io/v1beta1\nkind: ClusterTrustBundle\n" + meta("trust") + "spec:\n  trustBundle: |\n    " + indent(4, pemOf(caNew, caOld)) + "\n"},
		{"MutatingWebhookConfiguration", "    inject: [{kind: MutatingWebhookConfiguration, name: hooks}]\n",
			"apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n" + meta("hooks") +
				"webhooks:\n- name: a.example.com\n  clientConfig:\n    service: {name: hook, namespace: gw}\n    caBundle: " + b64(caNew, caOld) + "\n"},
		{"APIService", "    inject: [{kind: APIService, name: v1.metrics.example.com}]\n",
			"apiVersion: apiregistration.k8s.io/v1\nkind: APIService\n" + meta("v1.metrics.example.com") +
				"spec:\n  service: {name: metrics, namespace: gw}\n  caBundle: " + b64(caNew, caOld) + "\n"},
		{"CustomResourceDefinition", "    inject: [{kind: CustomResourceDefinition, name: foos.example.com}]\n",
			"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n" + meta("foos.example.com") +
				"spec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service: {name: conv, namespace: gw}\n        caBundle: " + b64(caNew, caOld) + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n"+tc.bundle, parseItems(t, sourceSecret(caNew), tc.target))
			requireForgedIgnored(t, r)
			require.Len(t, r.matching("annotation rotate-certs.dev/previous is ignored"), 1)
		})
	}
	t.Run("trust-manager Bundle", func(t *testing.T) {
		src := "apiVersion: v1\nkind: Secret\nmetadata: {name: root, namespace: trust}\ndata:\n  ca.crt: " + b64(caNew) + "\n"
		bundle := "apiVersion: trust.cert-manager.io/v1alpha1\nkind: Bundle\n" + meta("corp") +
			"spec:\n  sources:\n  - secret: {name: root, key: ca.crt}\n  - inLine: |\n      # managed-by: rotate-certs.dev/bundle=corp\n      " + indent(6, pemOf(caNew, caOld)) + "\n  target: {configMap: {key: ca.crt}}\n"
		r := render(t, tmBundle, parseItems(t, src, bundle))
		requireForgedIgnored(t, r)
		require.Len(t, r.matching("annotation rotate-certs.dev/seen names CA \"CN=forged"), 1)
	})
}

// requireForgedIgnored checks that no rendered object holds forged outside
// its annotations, that nothing failed, and that the forged retirement line
// was a warning.
func requireForgedIgnored(t *testing.T, r run) {
	t.Helper()
	for _, res := range r.results {
		require.NotEqual(t, framework.Error, res.Severity, res.Message)
	}
	fp := pki.FingerprintOf(forged.Cert).String()
	require.Len(t, r.matching("annotation rotate-certs.dev/retired names CA sha256:"+fp), 1)
	for _, it := range r.items {
		require.NotContains(t, it.GetAnnotations()["rotate-certs.dev/previous"], "BEGIN", "%s still remembers it", it.GetKind())
		body := it.Copy()
		require.NoError(t, body.PipeE(yaml.Clear("metadata")))
		text := body.MustString()
		require.NotContains(t, text, b64(forged), "%s holds the forged CA", it.GetKind())
		require.NotContains(t, text, strings.Split(pemOf(forged), "\n")[1], "%s holds the forged CA", it.GetKind())
	}
}

// TestMemoryWarningsOncePerObject: an object with several caBundle fields
// is read once per field; a memory annotation that cannot be read is one
// warning, not one per field.
func TestMemoryWarningsOncePerObject(t *testing.T) {
	hooks := "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: hooks\n  annotations:\n    rotate-certs.dev/retired: {a: b}\n" +
		"webhooks:\n- name: a.example.com\n  clientConfig:\n    service: {name: hook, namespace: gw}\n    caBundle: " + b64(caNew) + "\n" +
		"- name: b.example.com\n  clientConfig:\n    service: {name: hook, namespace: gw}\n    caBundle: " + b64(caNew) + "\n"
	r := render(t, injectBundle, parseItems(t, sourceSecret(caNew), hooks))
	require.Len(t, r.matching("annotation rotate-certs.dev/retired is a YAML object, not a string"), 1)
	require.Len(t, r.rendered[0].Targets, 2)
	record, err := r.items[1].Pipe(yaml.Lookup("metadata", "annotations", "rotate-certs.dev/retired"))
	require.NoError(t, err)
	require.Equal(t, yaml.ScalarNode, record.YNode().Kind, "rewritten as a string")
}
