package rotate_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// adoption is a target adopted by rotate-certs' first render: the object
// already holds the CAs its readers trust - the bundle's, spelled another
// way - and Deployment gw/app reads it.
type adoption struct {
	name string
	// bundle is the policy's trust bundle, its CAs from Secret gw/ca.
	bundle string
	// objects are the input's items besides the source and gw/app.
	objects string
	// pod is gw/app's pod spec: how it reads the target.
	pod string
}

// pemText returns the PEM of the named fixtures, in that order.
func pemText(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		b.Write(testpki.Fixture(n).PEM())
	}
	return b.String()
}

// literal returns text as a YAML literal block scalar indented by n spaces.
func literal(n int, text string) string {
	pad := strings.Repeat(" ", n)
	return "|\n" + pad + strings.ReplaceAll(strings.TrimSuffix(text, "\n"), "\n", "\n"+pad)
}

// wrapped returns the base64 of data folded at 76 columns, as openssl and
// many charts write a caBundle.
func wrapped(data string) string {
	enc := base64.StdEncoding.EncodeToString([]byte(data))
	var lines []string
	for len(enc) > 76 {
		lines, enc = append(lines, enc[:76]), enc[76:]
	}
	return strings.Join(append(lines, enc), "\n")
}

const podPlain = "containers: [{name: app, image: registry.example/app:1}]"

// adoptions: ca-2026 is the CA of the source; each target already holds
// it, most with ca-2025 beside it, in another order or encoding than the
// canonical one the render writes.
var adoptions = []adoption{
	{"Secret target, the CAs in another order",
		"    - name: gw\n      sources: [{secret: {name: ca, namespace: gw}}]\n      target: {name: trust}\n",
		"- {apiVersion: v1, kind: Secret, metadata: {name: trust, namespace: gw}, data: {ca.crt: " + base64.StdEncoding.EncodeToString([]byte(pemText("ca-2025", "ca-2026"))) + "}}\n",
		podPlain + "\n        volumes: [{name: trust, secret: {secretName: trust}}]"},
	{"ConfigMap target, binaryData with CRLF line ends",
		"    - name: gw\n      sources: [{secret: {name: ca, namespace: gw}}]\n      target: {kind: ConfigMap, name: trust}\n",
		"- {apiVersion: v1, kind: ConfigMap, metadata: {name: trust, namespace: gw}, binaryData: {ca-bundle.crt: " + base64.StdEncoding.EncodeToString([]byte(strings.ReplaceAll(pemText("ca-2025", "ca-2026"), "\n", "\r\n"))) + "}}\n",
		"containers: [{name: app, image: registry.example/app:1, env: [{name: CA, valueFrom: {configMapKeyRef: {name: trust, key: ca-bundle.crt}}}]}]"},
	{"ClusterTrustBundle, first render, the CAs in another order",
		"    - name: gw\n      sources: [{secret: {name: ca, namespace: gw}}]\n      target: {kind: ClusterTrustBundle, name: \"example.com:gw:v1\", signerName: example.com/gw}\n",
		"- apiVersion: certificates.k8s.io/v1beta1\n  kind: ClusterTrustBundle\n  metadata: {name: \"example.com:gw:v1\"}\n  spec:\n    signerName: example.com/gw\n    trustBundle: " + literal(6, pemText("ca-2025", "ca-2026")) + "\n",
		podPlain + "\n        volumes: [{name: roots, projected: {sources: [{clusterTrustBundle: {name: \"example.com:gw:v1\", path: ca.crt}}]}}]"},
	{"webhook caBundle, folded base64, the CAs in another order",
		"    - name: gw\n      sources: [{secret: {name: ca, namespace: gw}}]\n      inject: [{kind: MutatingWebhookConfiguration, name: hooks}]\n      restart: {workloads: [{kind: Deployment, namespace: gw, name: app}]}\n",
		"- apiVersion: admissionregistration.k8s.io/v1\n  kind: MutatingWebhookConfiguration\n  metadata: {name: hooks}\n  webhooks:\n  - name: a.example.com\n    clientConfig:\n      service: {name: app, namespace: gw}\n      caBundle: " + literal(8, wrapped(pemText("ca-2025", "ca-2026"))) + "\n",
		podPlain},
	// Linkerd's shape: two sources holding the same anchor, and the
	// user's own inLine source.
	{"trust-manager Bundle, first render",
		"    - name: gw\n      target: {kind: Bundle, name: gw, trustNamespace: gw}\n",
		"- {apiVersion: v1, kind: Secret, metadata: {name: ca-copy, namespace: gw}, data: {tls.crt: " + base64.StdEncoding.EncodeToString([]byte(pemText("ca-2026"))) + "}}\n" +
			"- apiVersion: trust.cert-manager.io/v1alpha1\n  kind: Bundle\n  metadata: {name: gw}\n  spec:\n    sources:\n    - secret: {name: ca, key: ca.crt}\n    - secret: {name: ca-copy, key: tls.crt}\n    - inLine: " + literal(8, "# a partner's root\n"+pemText("ca-2025")) + "\n    target: {configMap: {key: ca.crt}}\n",
		"containers: [{name: app, image: registry.example/app:1, env: [{name: CA, valueFrom: {configMapKeyRef: {name: gw, key: ca.crt}}}]}]"},
}

// adoptKindInput is the ResourceList of the first render of a, at
// 2026-12-15: its source holding ca, then objects.
func adoptKindInput(a adoption, ca, objects string) []byte {
	return fmt.Appendf(nil, `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    now: "2026-12-15T00:00:00Z"
    trustBundles:
%sitems:
- {apiVersion: v1, kind: Secret, metadata: {name: ca, namespace: gw}, data: {ca.crt: %s}}
%s`, a.bundle, base64.StdEncoding.EncodeToString([]byte(pemText(ca))), objects)
}

// TestAdoptingATargetRollsNobody: a roll follows a change of the CAs a
// workload reads, never of how the target spells them. The first render
// over a target of any kind that already holds the bundle's CAs - in
// another order or encoding, or a trust-manager Bundle whose sources hold
// them before rotate-certs pins them - rolls nobody and writes no
// trust-hash; replacing the CA at the source then rolls the reader.
func TestAdoptingATargetRollsNobody(t *testing.T) {
	app := kube.Key{Kind: "Deployment", Namespace: "gw", Name: "app"}
	for _, a := range adoptions {
		t.Run(a.name, func(t *testing.T) {
			deploy := "- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: app, namespace: gw}\n  spec:\n    replicas: 2\n    selector: {matchLabels: {app: app}}\n    template:\n      metadata: {labels: {app: app}}\n      spec:\n        " + a.pod + "\n"
			adopted := renderRestart(t, adoptKindInput(a, "ca-2026", a.objects+deploy))
			require.Empty(t, trustHashOf(t, adopted.items[app]), "adoption must not roll gw/app")
			require.NotContains(t, string(adopted.out), "rolled, its trust changed")
			want, err := yaml.Parse(strings.ReplaceAll(strings.TrimPrefix(deploy, "- "), "\n  ", "\n"))
			require.NoError(t, err)
			require.Equal(t, want.MustString(), adopted.items[app], "gw/app is left as it was")

			rotated := renderRestart(t, adopted.input(t, func(items []*yaml.RNode) {
				ca := base64.StdEncoding.EncodeToString(testpki.Fixture("ca-2027").PEM())
				require.NoError(t, items[0].PipeE(yaml.Lookup("data"), yaml.SetField("ca.crt", yaml.NewStringRNode(ca))))
			}))
			require.NotEmpty(t, trustHashOf(t, rotated.items[app]), "a new CA at the source rolls gw/app")
			require.Contains(t, string(rotated.out), "rolled, its trust changed")
		})
	}
}

// TestANewCopyRollsNobodyElsewhere: a workload named in restart.workloads
// in a namespace where the bundle has no target reads one of its targets'
// sets of CAs. Creating a copy of the same set in a new namespace, at the
// render that adopts the others, changes none of them: it is not rolled.
// Replacing the CA then rolls it.
func TestANewCopyRollsNobodyElsewhere(t *testing.T) {
	ca := base64.StdEncoding.EncodeToString([]byte(pemText("ca-2026")))
	a := adoption{bundle: "    - name: gw\n      sources: [{secret: {name: ca, namespace: gw}}]\n      target: {name: trust, namespaces: [a, b, c]}\n" +
		"      restart: {workloads: [{kind: Deployment, namespace: ops, name: app}]}\n"}
	objects := "- {apiVersion: v1, kind: Secret, metadata: {name: trust, namespace: a}, data: {ca.crt: " + ca + "}}\n" +
		"- {apiVersion: v1, kind: Secret, metadata: {name: trust, namespace: b}, data: {ca.crt: " + ca + "}}\n" +
		"- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: app, namespace: ops}\n  spec:\n    replicas: 2\n    selector: {matchLabels: {app: app}}\n    template:\n      metadata: {labels: {app: app}}\n      spec:\n        " + podPlain + "\n"
	app := kube.Key{Kind: "Deployment", Namespace: "ops", Name: "app"}
	r := renderRestart(t, adoptKindInput(a, "ca-2026", objects))
	require.Contains(t, r.items, kube.Key{Kind: "Secret", Namespace: "c", Name: "trust"}, "the copy in c is created")
	require.Empty(t, trustHashOf(t, r.items[app]), "a copy of the same CAs rolls nobody")

	rotated := renderRestart(t, r.input(t, func(items []*yaml.RNode) {
		next := base64.StdEncoding.EncodeToString(testpki.Fixture("ca-2027").PEM())
		require.NoError(t, items[0].PipeE(yaml.Lookup("data"), yaml.SetField("ca.crt", yaml.NewStringRNode(next))))
	}))
	require.NotEmpty(t, trustHashOf(t, rotated.items[app]), "a new CA rolls it")
}
