package trustbundle_test

import (
	"crypto/x509"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func webhookConfig(caBundle string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: hooks}
webhooks:
- name: a.example.com
  clientConfig:
    service: {name: hook, namespace: gw}
    caBundle: ` + caBundle + `
- name: b.example.com
  clientConfig:
    url: https://b.example.com/hook
`
}

const injectBundle = `  - name: gw
    sources: [{secret: {name: src, namespace: gw}}]
    inject: [{kind: MutatingWebhookConfiguration, name: hooks}]
`

func caBundleAt(t *testing.T, node *yaml.RNode, webhook int) []string {
	t.Helper()
	hooks, err := node.Pipe(yaml.Lookup("webhooks"))
	require.NoError(t, err)
	entries, err := hooks.Elements()
	require.NoError(t, err)
	v, err := entries[webhook].Pipe(yaml.Lookup("clientConfig", "caBundle"))
	require.NoError(t, err)
	b, err := base64.StdEncoding.DecodeString(v.YNode().Value)
	require.NoError(t, err)
	d, err := pki.DecodePEM(b)
	require.NoError(t, err)
	var cns []string
	for _, c := range d.Certificates {
		cns = append(cns, c.Subject.CommonName)
	}
	return cns
}

// TestInjectEveryWebhook: every webhook of the object is a target of its
// own; the one with a previous caBundle carries its old CA, the one
// without starts from the current CA alone (with a warning), and the
// object's retirement record names each field.
func TestInjectEveryWebhook(t *testing.T) {
	r := render(t, injectBundle, parseItems(t, sourceSecret(caNew), webhookConfig(b64(caOld))))
	require.Empty(t, r.errors())
	node := r.items[1]
	require.Equal(t, []string{"new", "old"}, caBundleAt(t, node, 0))
	require.Equal(t, []string{"new"}, caBundleAt(t, node, 1))
	require.Len(t, r.matching("held no certificate in webhooks[name=b.example.com].clientConfig.caBundle"), 1)
	record := node.GetAnnotations()["rotate-certs.dev/retired"]
	// No record yet: the old CA retires at this render (now).
	require.Equal(t, pki.FingerprintOf(caOld.Cert).String()+" 2026-11-22T00:00:00Z webhooks[name=a.example.com].clientConfig.caBundle\n", record)
	require.Len(t, r.rendered[0].Targets, 2)
	for _, tg := range r.rendered[0].Targets {
		require.True(t, tg.TrustChanged)
		require.Contains(t, tg.Where(), "MutatingWebhookConfiguration hooks webhooks[name=")
	}

	// The output, rendered again, changes nothing: each field finds its
	// own previous state in the record.
	second := render(t, injectBundle, r.again(t))
	require.Equal(t, r.text(), second.text())
	for _, tg := range second.rendered[0].Targets {
		require.False(t, tg.Changed || tg.TrustChanged)
	}
}

// TestInjectKeepsTheBytesOfAnUnchangedSet: a caBundle that already holds
// exactly the rendered PEM is left as written (here wrapped over lines),
// not re-encoded.
func TestInjectKeepsTheBytesOfAnUnchangedSet(t *testing.T) {
	pem := anchors.Outcome{Current: []*x509.Certificate{caNew.Cert}, Previous: []*x509.Certificate{caOld.Cert}}.PEM()
	enc := base64.StdEncoding.EncodeToString(pem)
	var wrapped []string
	for len(enc) > 76 {
		wrapped, enc = append(wrapped, enc[:76]), enc[76:]
	}
	folded := "|\n      " + strings.Join(append(wrapped, enc), "\n      ")
	record := "rotate-certs.dev/retired: '" + pki.FingerprintOf(caOld.Cert).String() + " 2026-11-01T00:00:00Z'"
	doc := strings.Replace(webhookConfig(folded), "metadata: {name: hooks}", "metadata: {name: hooks, annotations: {"+record+"}}", 1)
	doc = strings.Replace(doc, "inject: [{kind: MutatingWebhookConfiguration, name: hooks}]", "", 1)
	r := render(t, `  - name: gw
    sources: [{secret: {name: src, namespace: gw}}]
    inject: [{kind: MutatingWebhookConfiguration, name: hooks, webhooks: [a.example.com]}]
`, parseItems(t, sourceSecret(caNew), doc))
	require.Empty(t, r.errors())
	v, err := r.items[1].Pipe(yaml.Lookup("webhooks", "[name=a.example.com]", "clientConfig", "caBundle"))
	require.NoError(t, err)
	require.Equal(t, strings.Join(append(wrapped, enc), "\n")+"\n", v.YNode().Value, "an unchanged set must keep the field's bytes")
	require.False(t, r.rendered[0].Targets[0].TrustChanged)
}

// TestInjectCopyMode: Copy mode writes only the current CA into the field
// and keeps the previous one, keyed by the field, for a switch back.
func TestInjectCopyMode(t *testing.T) {
	first := render(t, injectBundle, parseItems(t, sourceSecret(caNew), webhookConfig(b64(caOld))))
	copyMode := strings.Replace(injectBundle, "  - name: gw\n", "  - name: gw\n    mode: Copy\n", 1)
	second := render(t, copyMode, first.again(t))
	node := second.items[1]
	require.Equal(t, []string{"new"}, caBundleAt(t, node, 0))
	previous := node.GetAnnotations()["rotate-certs.dev/previous"]
	require.Contains(t, previous, "Key: webhooks[name=a.example.com].clientConfig.caBundle")
	require.NotContains(t, previous, "b.example.com", "the second webhook never trusted the old CA")
	back := render(t, injectBundle, second.again(t))
	require.Equal(t, []string{"new", "old"}, caBundleAt(t, back.items[1], 0), "Bundle mode restores what Copy mode kept")
	require.Equal(t, first.text(), back.text())
}

// TestInjectNothing: a bundle without target, inject list or annotated
// object writes nothing, which is an error.
func TestInjectNothing(t *testing.T) {
	r := render(t, "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n", parseItems(t, sourceSecret(caNew)))
	require.Len(t, r.matching("writes nothing"), 1)
}

// TestInjectLeavesTargetMetadataToTheTarget: target.metadata labels the
// bundle's target object, not the objects it injects into.
func TestInjectLeavesTargetMetadataToTheTarget(t *testing.T) {
	r := render(t, `  - name: gw
    sources: [{secret: {name: src, namespace: gw}}]
    target: {name: trust, metadata: {labels: {team: edge}}}
    inject: [{kind: MutatingWebhookConfiguration, name: hooks}]
`, parseItems(t, sourceSecret(caNew), webhookConfig(b64(caOld))))
	require.Empty(t, r.errors())
	require.Empty(t, r.items[1].GetLabels(), "the webhook configuration keeps its own labels")
	require.Equal(t, "edge", r.items[2].GetLabels()["team"], "the created target gets them")
}

// TestInjectInsecureAPIServiceAnyBooleanSpelling: insecureSkipTLSVerify is
// refused with a caBundle however YAML spells true for kubectl (True, yes,
// on): the API server would refuse the apply.
func TestInjectInsecureAPIServiceAnyBooleanSpelling(t *testing.T) {
	const bundle = `  - name: apis
    sources: [{secret: {name: src, namespace: gw}}]
    inject: [{kind: APIService, name: v1.api.example.com}]
`
	apiService := func(v string) string {
		return `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.api.example.com}
spec:
  service: {name: api, namespace: gw}
  group: api.example.com
  version: v1
  insecureSkipTLSVerify: ` + v + `
`
	}
	for _, v := range []string{"true", "True", "yes", "on"} {
		r := render(t, bundle, parseItems(t, sourceSecret(caNew), apiService(v)))
		got := r.matching("sets insecureSkipTLSVerify: true")
		require.Len(t, got, 1, v)
		require.Equal(t, framework.Error, got[0].Severity, v)
	}
	r := render(t, bundle, parseItems(t, sourceSecret(caNew), apiService("false")))
	require.Empty(t, r.matching("insecureSkipTLSVerify"))
}
