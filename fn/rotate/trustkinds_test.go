package rotate_test

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// trustKind is one place a bundle can live outside a Secret or ConfigMap:
// how a policy names it, the object as a chart ships it, and how the API
// server (or trust-manager) reads the trusted set back from it.
type trustKind struct {
	name string
	// bundle is the policy's trust bundle, sourced from Secret gw/ca.
	bundle string
	// objects are the input objects besides the source, before any render.
	objects string
	// trusted returns the certificates the consumer trusts, from the
	// rendered items.
	trusted func(t *testing.T, items []*yaml.RNode) []*x509.Certificate
}

var trustKinds = []trustKind{
	{
		name: "webhook caBundle",
		bundle: `    - name: gw
      sources: [{secret: {name: ca, namespace: gw}}]
      inject: [{kind: ValidatingWebhookConfiguration, name: hooks}]
`,
		objects: `- apiVersion: admissionregistration.k8s.io/v1
  kind: ValidatingWebhookConfiguration
  metadata: {name: hooks}
  webhooks:
  - name: a.example.com
    admissionReviewVersions: ["v1"]
    sideEffects: None
    clientConfig: {service: {name: hook, namespace: gw}}
`,
		trusted: func(t *testing.T, items []*yaml.RNode) []*x509.Certificate {
			return pemAt(t, items, "ValidatingWebhookConfiguration", true, "webhooks", "0", "clientConfig", "caBundle")
		},
	},
	{
		name: "ClusterTrustBundle",
		bundle: `    - name: gw
      sources: [{secret: {name: ca, namespace: gw}}]
      target: {kind: ClusterTrustBundle, name: "example.com:gw:v1", signerName: example.com/gw}
`,
		trusted: func(t *testing.T, items []*yaml.RNode) []*x509.Certificate {
			return pemAt(t, items, "ClusterTrustBundle", false, "spec", "trustBundle")
		},
	},
	{
		name: "trust-manager Bundle",
		bundle: `    - name: gw
      target: {kind: Bundle, name: gw, trustNamespace: gw}
`,
		objects: `- apiVersion: trust.cert-manager.io/v1alpha1
  kind: Bundle
  metadata: {name: gw}
  spec:
    sources:
    - secret: {name: ca, key: ca.crt}
    target: {configMap: {key: ca.crt}}
`,
		// trust-manager's union: the Secret the Bundle names, and every
		// inLine source.
		trusted: func(t *testing.T, items []*yaml.RNode) []*x509.Certificate {
			certs := pemAt(t, items, "Secret", true, "data", "ca.crt")
			for i := 0; i < 4; i++ {
				certs = append(certs, pemAt(t, items, "Bundle", false, "spec", "sources", fmt.Sprint(i), "inLine")...)
			}
			return certs
		},
	},
}

// pemAt returns the certificates of the value at path in the first item of
// kind, base64-decoded first when encoded; none when absent.
func pemAt(t *testing.T, items []*yaml.RNode, kind string, encoded bool, path ...string) []*x509.Certificate {
	t.Helper()
	for _, it := range items {
		if it.GetKind() != kind {
			continue
		}
		v, err := it.Pipe(yaml.Lookup(path...))
		require.NoError(t, err)
		if v == nil {
			return nil
		}
		data := []byte(v.YNode().Value)
		if encoded {
			data, err = base64.StdEncoding.DecodeString(v.YNode().Value)
			require.NoError(t, err)
		}
		d, err := pki.DecodePEM(data)
		require.NoError(t, err)
		return d.Certificates
	}
	return nil
}

// rotateTrustKind renders kind with source CA ca over the items of the
// previous render (nil: the first render) at now.
func rotateTrustKind(t *testing.T, k trustKind, ca string, now time.Time, previous []*yaml.RNode) []*yaml.RNode {
	t.Helper()
	var items bytes.Buffer
	fmt.Fprintf(&items, "- apiVersion: v1\n  kind: Secret\n  metadata: {name: ca, namespace: gw}\n  data: {ca.crt: %s}\n",
		base64.StdEncoding.EncodeToString(testpki.Fixture(ca).PEM()))
	if previous == nil {
		items.WriteString(k.objects)
	}
	for _, it := range previous {
		if it.GetKind() == "Secret" {
			continue
		}
		s, err := it.String()
		require.NoError(t, err)
		items.WriteString("- " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n")
	}
	in := fmt.Sprintf("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata: {name: p}\n  spec:\n    now: %q\n    trustBundles:\n%sitems:\n%s",
		now.Format(time.RFC3339), k.bundle, items.String())
	out, err := execute(t, []byte(in))
	require.NoError(t, err, "%s", out)
	rl := parseResourceList(t, out)
	return rl.items
}

// TestTrustKindsAreSafeAcrossARotation: for every place a bundle can live
// outside a Secret, a leaf of the old CA still verifies against what the
// consumer trusts after the CA is replaced at the source, a leaf of the
// new CA verifies from the render that brings it, and the old CA leaves
// only when it expires. Each render is idempotent.
func TestTrustKindsAreSafeAcrossARotation(t *testing.T) {
	oldLeaf, newLeaf := testpki.Fixture("leaf-old").Cert, testpki.Fixture("leaf-new").Cert
	steps := []struct {
		ca       string
		now      time.Time
		verifies []*x509.Certificate
		fails    []*x509.Certificate
	}{
		{"ca-2025", testpki.Date(2026, 10, 15), []*x509.Certificate{oldLeaf}, []*x509.Certificate{newLeaf}},
		{"ca-2026", testpki.Date(2026, 11, 15), []*x509.Certificate{oldLeaf, newLeaf}, nil},
		{"ca-2026", testpki.Date(2026, 12, 20), []*x509.Certificate{oldLeaf, newLeaf}, nil},
		// ca-2025 expires on 2027-06-01: it has left every consumer.
		{"ca-2026", testpki.Date(2027, 6, 2), nil, []*x509.Certificate{oldLeaf}},
	}
	for _, k := range trustKinds {
		t.Run(k.name, func(t *testing.T) {
			var items []*yaml.RNode
			for i, s := range steps {
				items = rotateTrustKind(t, k, s.ca, s.now, items)
				pool := x509.NewCertPool()
				for _, c := range k.trusted(t, items) {
					pool.AddCert(c)
				}
				verifyAt := s.now
				for _, leaf := range s.verifies {
					if leaf.NotAfter.Before(verifyAt) {
						continue
					}
					_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: verifyAt, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
					require.NoError(t, err, "step %d: %s must verify", i, leaf.Subject.CommonName)
				}
				for _, leaf := range s.fails {
					_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: leaf.NotBefore, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
					require.Error(t, err, "step %d: %s must not verify yet/any more", i, leaf.Subject.CommonName)
				}
				again := rotateTrustKind(t, k, s.ca, s.now, items)
				require.Equal(t, itemStrings(t, items), itemStrings(t, again), "step %d: a re-render must change nothing", i)
			}
		})
	}
}

// TestTrustKindsHostileShapes: objects of the new target kinds whose fields
// have the wrong YAML shape fail the render with an error (or pass through
// untouched when rotate-certs has nothing to write there); none panics.
func TestTrustKindsHostileShapes(t *testing.T) {
	policy := func(bundle string) string {
		return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata: {name: p}\n  spec:\n    trustBundles:\n" + bundle +
			"items:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: ca, namespace: gw}\n  data: {ca.crt: " + base64.StdEncoding.EncodeToString(testpki.Fixture("ca-2026").PEM()) + "}\n"
	}
	inject := func(kind string) string {
		return "    - name: b\n      sources: [{secret: {name: ca, namespace: gw}}]\n      inject: [{kind: " + kind + ", name: x}]\n"
	}
	for _, tt := range []struct{ name, bundle, object string }{
		{"webhooks is a map", inject("MutatingWebhookConfiguration"), "apiVersion: admissionregistration.k8s.io/v1\n  kind: MutatingWebhookConfiguration\n  metadata: {name: x}\n  webhooks: {a: b}\n"},
		{"a webhook is a string", inject("MutatingWebhookConfiguration"), "apiVersion: admissionregistration.k8s.io/v1\n  kind: MutatingWebhookConfiguration\n  metadata: {name: x}\n  webhooks: [a]\n"},
		{"clientConfig is a list", inject("ValidatingWebhookConfiguration"), "apiVersion: admissionregistration.k8s.io/v1\n  kind: ValidatingWebhookConfiguration\n  metadata: {name: x}\n  webhooks: [{name: a, clientConfig: [1]}]\n"},
		{"caBundle is a map", inject("ValidatingWebhookConfiguration"), "apiVersion: admissionregistration.k8s.io/v1\n  kind: ValidatingWebhookConfiguration\n  metadata: {name: x}\n  webhooks: [{name: a, clientConfig: {url: 'https://a', caBundle: {x: 1}}}]\n"},
		{"spec is a string", inject("APIService"), "apiVersion: apiregistration.k8s.io/v1\n  kind: APIService\n  metadata: {name: x}\n  spec: nope\n"},
		{"conversion webhook is a list", inject("CustomResourceDefinition"), "apiVersion: apiextensions.k8s.io/v1\n  kind: CustomResourceDefinition\n  metadata: {name: x}\n  spec: {conversion: {strategy: Webhook, webhook: [1]}}\n"},
		{"trustBundle is a list", "    - name: b\n      sources: [{secret: {name: ca, namespace: gw}}]\n      target: {kind: ClusterTrustBundle, name: x}\n", "apiVersion: certificates.k8s.io/v1beta1\n  kind: ClusterTrustBundle\n  metadata: {name: x}\n  spec: {trustBundle: [a]}\n"},
		{"sources is a map", "    - name: b\n      target: {kind: Bundle, name: x}\n", "apiVersion: trust.cert-manager.io/v1alpha1\n  kind: Bundle\n  metadata: {name: x}\n  spec: {sources: {a: b}}\n"},
		{"a source is a string", "    - name: b\n      target: {kind: Bundle, name: x}\n", "apiVersion: trust.cert-manager.io/v1alpha1\n  kind: Bundle\n  metadata: {name: x}\n  spec: {sources: [a]}\n"},
		{"selector is a string", "    - name: b\n      target: {kind: Bundle, name: x}\n", "apiVersion: trust.cert-manager.io/v1alpha1\n  kind: Bundle\n  metadata: {name: x}\n  spec: {sources: [{secret: {selector: a, key: ca.crt}}]}\n"},
		{"inLine is a list", "    - name: b\n      target: {kind: Bundle, name: x}\n", "apiVersion: trust.cert-manager.io/v1alpha1\n  kind: Bundle\n  metadata: {name: x}\n  spec: {sources: [{inLine: [a]}]}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := execute(t, []byte(policy(tt.bundle)+"- "+tt.object))
			require.Error(t, err, "%s", out)
			rl := parseResourceList(t, out)
			require.Empty(t, rl.items)
			require.Contains(t, rl.results, "severity: error")
		})
	}
}
