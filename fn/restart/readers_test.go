package restart

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const projectCTB = "      containers:\n      - name: c\n        volumeMounts: [{name: roots, mountPath: /roots}]\n      volumes:\n      - name: roots\n        projected:\n          sources:\n          - clusterTrustBundle: %s\n"

func TestClusterTrustBundleReaders(t *testing.T) {
	items := parseItems(t,
		deployment("a", "by-name", "", fmt.Sprintf(projectCTB, "{name: 'example.com:gateway:v1', path: ca.crt}")),
		deployment("b", "by-signer", "", fmt.Sprintf(projectCTB, "{signerName: example.com/gateway, labelSelector: {matchLabels: {bundle: gateway}}, path: ca.crt}")),
		deployment("b", "signer-no-selector", "", fmt.Sprintf(projectCTB, "{signerName: example.com/gateway, path: ca.crt}")),
		deployment("b", "signer-other-labels", "", fmt.Sprintf(projectCTB, "{signerName: example.com/gateway, labelSelector: {matchLabels: {bundle: mesh}}, path: ca.crt}")),
		deployment("c", "hot", "rotate-certs.dev/reload: hot", fmt.Sprintf(projectCTB, "{name: 'example.com:gateway:v1', path: ca.crt}")),
		"apiVersion: certificates.k8s.io/v1beta1\nkind: ClusterTrustBundle\nmetadata: {name: 'example.com:gateway:v1', labels: {bundle: gateway}}\nspec: {signerName: example.com/gateway, trustBundle: ''}\n",
	)
	ctb := Target{Key: kube.Key{Kind: "ClusterTrustBundle", Name: "example.com:gateway:v1"}, Hash: "sha256:01", Changed: true, Node: items[5]}
	results := apply([]Bundle{{Name: "gw", Targets: []Target{ctb}, Restart: policy.Restart{Auto: yes()}}}, Env{Items: items})
	assert.NotEmpty(t, hashOf(t, items[0]), "projected by name: a whole volume, rolled")
	assert.NotEmpty(t, hashOf(t, items[1]), "projected by signer, the label selector selects the bundle")
	assert.Empty(t, hashOf(t, items[2]), "an unset labelSelector selects nothing")
	assert.Empty(t, hashOf(t, items[3]))
	assert.Empty(t, hashOf(t, items[4]), "the reload class applies: hot")
	var msgs []string
	for _, r := range results {
		msgs = append(msgs, r.Message)
	}
	assert.Contains(t, msgs[1], "by signer name example.com/gateway")
}

// readsRoots is a pod template that reads key ca.crt of ConfigMap roots.
const readsRoots = "      containers:\n      - name: c\n        env:\n        - {name: CA, valueFrom: {configMapKeyRef: {name: roots, key: ca.crt}}}\n"

// rootsBundle is a policy bundle whose target is trust-manager Bundle
// roots, read from node.
func rootsBundle(node *yaml.RNode) Bundle {
	return Bundle{Name: "tm", Targets: []Target{{Key: kube.Key{Kind: "Bundle", Name: "roots"}, Hash: "sha256:01", Changed: true, Node: node}},
		Restart: policy.Restart{Auto: yes()}}
}

// TestTrustManagerReaders: the workloads that read the object a
// trust-manager Bundle writes, in each namespace its namespaceSelector
// selects: on the labels of the input's Namespace, plus the name label the
// API server sets on every Namespace (kubernetes.io/metadata.name), which
// no manifest carries and which alone decides a namespace the input lacks.
func TestTrustManagerReaders(t *testing.T) {
	const bundle = "apiVersion: trust.cert-manager.io/v1alpha1\nkind: Bundle\nmetadata: {name: roots}\nspec:\n  sources: []\n  target:\n    configMap: {key: ca.crt}\n"
	// Namespace a (labelled trust: yes) and b are in the input, y and z not.
	namespaces := []string{"a", "b", "y", "z"}
	for _, tc := range []struct {
		name, selector string
		rolled         []bool // per namespace
	}{
		{"by label; an absent namespace cannot be told selected", "{matchLabels: {trust: 'yes'}}", []bool{true, false, false, false}},
		{"no namespaceSelector: every namespace", "", []bool{true, true, true, true}},
		{"by the name label", "{matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [a, z]}]}", []bool{true, false, false, true}},
		{"by the name label and another", "{matchLabels: {kubernetes.io/metadata.name: z, trust: 'yes'}}", []bool{false, false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs := []string{"apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {trust: 'yes'}}\n", "apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n"}
			for _, ns := range namespaces {
				docs = append(docs, deployment(ns, "reader", "", readsRoots))
			}
			b := bundle
			if tc.selector != "" {
				b += "    namespaceSelector: " + tc.selector + "\n"
			}
			items := parseItems(t, append(docs, b)...)
			results := apply([]Bundle{rootsBundle(items[len(items)-1])}, Env{Items: items})
			for i, ns := range namespaces {
				assert.Equal(t, tc.rolled[i], hashOf(t, items[2+i]) != "", "namespace %s", ns)
			}
			if tc.rolled[0] {
				assert.Contains(t, results[0].Message, "ConfigMap a/roots written by trust-manager Bundle roots")
			}
		})
	}
}

func TestInjectedConsumersRoll(t *testing.T) {
	items := parseItems(t,
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: app, annotations: {linkerd.io/inject: enabled}}\n",
		deployment("app", "meshed", "rotate-certs.dev/reload: hot", readsNothing),
		deployment("app", "opted-out", "", "      containers:\n      - name: c\n")+"",
		deployment("app", "never", "rotate-certs.dev/reload: never", readsNothing),
		deployment("elsewhere", "unknown", "", readsNothing),
	)
	// opt the second out in its pod template
	_, err := kube.SetAnnotation(kube.At(items[2], "spec", "template"), "linkerd.io/inject", "disabled")
	require.NoError(t, err)
	b := Bundle{Name: "mesh", Field: "spec.trustBundles[0]", Targets: []Target{{Key: kube.Key{Kind: "ConfigMap", Namespace: "linkerd", Name: "linkerd-identity-trust-roots"}, Hash: "sha256:01", Changed: true}},
		Restart: policy.Restart{Auto: yes(), Mesh: policy.MeshLinkerd}}
	results := apply([]Bundle{b}, Env{Items: items, PolicyRef: kube.Ref{Kind: "RotationPolicy", Name: "p"}})
	assert.NotEmpty(t, hashOf(t, items[1]), "injected: rolled even when hot")
	assert.Empty(t, hashOf(t, items[2]), "opted out")
	assert.Empty(t, hashOf(t, items[3]), "reload: never")
	assert.Empty(t, hashOf(t, items[4]), "its Namespace is not in the input")
	var joined string
	for _, r := range results {
		joined += string(r.Severity) + " " + r.Message + "\n"
	}
	assert.Contains(t, joined, "is copied into its pods at admission by Namespace annotation linkerd.io/inject: enabled (restart.mesh: linkerd)")
	assert.Contains(t, joined, "warning bundle \"mesh\": the Namespace elsewhere is not in the input")
}

// TestInjectedByNamespaceName: restart.injected's namespaceSelector sees
// the name label the API server sets on every Namespace
// (kubernetes.io/metadata.name), as trust-manager's does: a selection by
// namespace name - In [app], or every namespace NotIn [kube-system] -
// selects the workloads of the Namespaces in the input by their names.
func TestInjectedByNamespaceName(t *testing.T) {
	for _, tc := range []struct {
		name, selector string
		rolled         []bool // app, kube-system
	}{
		{"In", `{"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["app"]}]}`, []bool{true, false}},
		{"NotIn", `{"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}]}`, []bool{true, false}},
		{"matchLabels", `{"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}`, []bool{false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := parseItems(t,
				"apiVersion: v1\nkind: Namespace\nmetadata: {name: app}\n",
				"apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-system}\n",
				deployment("app", "meshed", "", readsNothing),
				deployment("kube-system", "system", "", readsNothing),
			)
			var sel kube.Selector
			require.NoError(t, json.Unmarshal([]byte(tc.selector), &sel))
			b := Bundle{Name: "mesh", Field: "spec.trustBundles[0]", Targets: []Target{{Key: kube.Key{Kind: "ConfigMap", Namespace: "mesh", Name: "roots"}, Hash: "sha256:01", Changed: true}},
				Restart: policy.Restart{Auto: yes(), Injected: []policy.Selection{{NamespaceSelector: &sel}}}}
			apply([]Bundle{b}, Env{Items: items, PolicyRef: kube.Ref{Kind: "RotationPolicy", Name: "p"}})
			assert.Equal(t, tc.rolled[0], hashOf(t, items[2]) != "", "app")
			assert.Equal(t, tc.rolled[1], hashOf(t, items[3]) != "", "kube-system")
		})
	}
}
