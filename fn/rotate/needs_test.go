package rotate_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// The read plan drops Secrets and ConfigMaps no step reads; what the
// function says must not depend on it. Each input goes through the fast
// path (which applies the plan) and through kyaml's reader (which keeps
// every item): the outputs must be the same bytes.
func TestReadPlanKeepsWhatMessagesName(t *testing.T) {
	const head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
	const policy = "functionConfig:\n  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata:\n    name: p\n  spec:\n    now: \"2026-06-01T00:00:00Z\"\n    trustBundles:\n    - name: b\n      sources:\n      - secret: {name: ca-root, namespace: apps}\n      target: {name: trust}\n"
	tests := map[string]string{
		// The source is missing; the nearest Secret holds no certificate,
		// and the error names it and its keys.
		"a near name without a certificate": "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: ca-roots\n    namespace: apps\n  stringData:\n    token: abc\n",
		// The same name in another namespace.
		"the same name elsewhere": "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: ca-root\n    namespace: other\n  stringData:\n    token: abc\n",
		// A Secret no step reads, with a key twice: refused either way.
		"a duplicate key": "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: unrelated\n    namespace: apps\n  stringData:\n    token: abc\n    token: def\n",
	}
	for name, items := range tests {
		t.Run(name, func(t *testing.T) {
			requireBothPathsFail(t, []byte(head+items+policy))
		})
	}
}

// A trust-manager Bundle names its sources in its own spec, not in the
// policy: the read plan keeps every Secret and ConfigMap of the trust
// namespace, so that a source that is there but empty is reported as
// empty - not as "not in the input" - by both paths.
func TestReadPlanKeepsTrustManagerSources(t *testing.T) {
	const policy = "functionConfig:\n  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata: {name: p}\n  spec:\n    now: \"2026-11-22T00:00:00Z\"\n    trustBundles:\n    - name: corp\n      target: {kind: Bundle, name: corp-trust, trustNamespace: trust}\n"
	const bundle = "- apiVersion: trust.cert-manager.io/v1alpha1\n  kind: Bundle\n  metadata: {name: corp-trust}\n  spec:\n    sources:\n    - %s\n    target: {configMap: {key: ca.crt}}\n"
	for name, tc := range map[string]struct{ items, source, want string }{
		"a named ConfigMap without data": {"- {apiVersion: v1, kind: ConfigMap, metadata: {name: roots, namespace: trust}}\n",
			"configMap: {name: roots, key: ca.crt}", "ConfigMap trust/roots is empty: it has no key \"ca.crt\""},
		"a named Secret with empty data": {"- {apiVersion: v1, kind: Secret, metadata: {name: roots, namespace: trust}, data: {}}\n",
			"secret: {name: roots, key: ca.crt}", "Secret trust/roots is empty: it has no key \"ca.crt\""},
		"a selected ConfigMap without data": {"- {apiVersion: v1, kind: ConfigMap, metadata: {name: roots, namespace: trust, labels: {root: \"true\"}}}\n",
			"configMap: {selector: {matchLabels: {root: \"true\"}}, key: ca.crt}", "ConfigMap trust/roots is empty: it has no key \"ca.crt\""},
	} {
		t.Run(name, func(t *testing.T) {
			out := requireBothPathsFail(t, []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"+tc.items+fmt.Sprintf(bundle, tc.source)+policy))
			require.Contains(t, out, tc.want)
			require.NotContains(t, out, "not in the input")
		})
	}
}

// requireBothPathsFail runs input through the fast path (which applies the
// read plan) and through kyaml's reader (which keeps every item): both must
// fail and print the same bytes, which it returns.
func requireBothPathsFail(t *testing.T, input []byte) string {
	t.Helper()
	p := rotate.Processor{Now: func() time.Time { return testpki.GoldenNow }}
	var fast, slow bytes.Buffer
	handled, fastErr := resio.RunFast(input, &fast, rotate.Needs, p.Run)
	require.True(t, handled, "the input must take the fast path: %v", fastErr)
	slowErr := resio.RunKyaml(input, &slow, p.Run)
	require.Error(t, fastErr)
	require.Error(t, slowErr)
	require.Equal(t, slow.String(), fast.String())
	return fast.String()
}

// A cert-manager Certificate is read in function mode: the renewal of a
// source's CA is foreseen on the fast path (which parses only the kinds
// Needs names) exactly as on kyaml's reader (which parses every item).
func TestReadPlanKeepsCertManagerCertificates(t *testing.T) {
	const input = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: cert-manager.io/v1
  kind: Certificate
  metadata: {name: root-ca, namespace: cert-manager}
  spec: {isCA: true, secretName: root-ca, renewBefore: 4440h, issuerRef: {name: selfsigned, kind: ClusterIssuer}}
- apiVersion: v1
  kind: Secret
  metadata: {name: root-ca, namespace: cert-manager, annotations: {config.kubernetes.io/local-config: "true"}}
  type: kubernetes.io/tls
  data: {ca.crt: %[1]s, tls.crt: %[1]s}
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    now: "2026-11-22T00:00:00Z"
    trustBundles:
    - name: platform
      sources: [{secret: {name: root-ca, namespace: cert-manager, key: ca.crt}}]
      target: {kind: ConfigMap, name: platform-trust, namespaces: [apps], key: ca.crt}
`
	in := []byte(fmt.Sprintf(input, base64.StdEncoding.EncodeToString(testpki.Fixture("ca-2025").PEM())))
	out := requireBothPathsAgree(t, in)
	require.Contains(t, out, "CA Certificate cert-manager/root-ca writes its source Secret cert-manager/root-ca")
	require.Contains(t, out, "cert-manager renews it at 2026-11-28T00:00:00Z")
}

// The Secrets and Certificates a trust-manager source selects by label
// are read in function mode as on kyaml's reader: the golden case's
// forecasts, its warning about a Secret git lacks and its drift alert come
// out of the fast path byte for byte.
func TestReadPlanKeepsSelectedCertificates(t *testing.T) {
	in := goldenInput(t, filepath.Join(goldenDir, "trust-manager-selector-renewal"))
	out := requireBothPathsAgree(t, in)
	require.Contains(t, out, "CA Certificate trust/root-ca writes its source Secret trust/root-ca (spec.sources[0] of Bundle corp-trust, selector")
}

// requireBothPathsAgree runs input through the fast path (which applies
// the read plan) and through kyaml's reader (which keeps every item): both
// must succeed and print the same bytes, which it returns.
func requireBothPathsAgree(t *testing.T, input []byte) string {
	t.Helper()
	p := rotate.Processor{Now: func() time.Time { return testpki.GoldenNow }}
	var fast, slow bytes.Buffer
	handled, err := resio.RunFast(input, &fast, rotate.Needs, p.Run)
	require.True(t, handled, "the input must take the fast path: %v", err)
	require.NoError(t, err)
	require.NoError(t, resio.RunKyaml(input, &slow, p.Run))
	require.Equal(t, slow.String(), fast.String())
	return fast.String()
}

// The processor refuses an object it reads that defines a mapping key
// twice; of the kinds the steps read only in part, the read plan keeps
// every such object, so that function mode refuses it as kyaml's reader
// does - here a Namespace no step reads (the bundle writes a
// ClusterTrustBundle and selects no namespace).
func TestReadPlanKeepsWhatTheProcessorRefuses(t *testing.T) {
	const input = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: Namespace
  metadata:
    name: apps
    name: other
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    now: "2026-06-01T00:00:00Z"
    trustBundles:
    - name: b
      sources:
      - secret: {name: ca-root, namespace: apps}
      target: {kind: ClusterTrustBundle, name: trust}
`
	out := requireBothPathsFail(t, []byte(input))
	require.Contains(t, out, `items[0] (Namespace apps): mapping key "name" is defined twice`)
}
