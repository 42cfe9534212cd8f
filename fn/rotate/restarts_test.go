package rotate_test

import (
	"bytes"
	"sort"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// restartRotationInput is a package with two bundles and a consumer of every kind:
// gateway rotates (its source CA is replaced), signers does not.
const restartRotationInput = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata:
    name: trust
  spec:
    now: "2026-11-22T00:00:00Z"
    trustBundles:
    - name: gateway
      sources:
      - secret: {name: envoy-gateway, namespace: gw}
      target:
        name: gateway-trust
    - name: signers
      sources:
      - inline: |
          {{pem 10 "signer-b-1"}}
      target:
        kind: ConfigMap
        name: signers
        namespaces: [gw]
items:
- apiVersion: v1
  kind: Secret
  metadata:
    name: envoy-gateway
    namespace: gw
  data:
    ca.crt: {{b64 "ca-2025"}}
- apiVersion: v1
  kind: Secret
  metadata:
    name: gateway-trust
    namespace: gw
  data:
    ca.crt: {{b64 "ca-2025"}}
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: env # reads the CA through env
    namespace: gw
  spec:
    replicas: 2
    selector: {matchLabels: {app: env}}
    template:
      metadata:
        labels: {app: env}
      spec:
        containers:
        - name: app
          image: "example.com/app:v1" # quoted on purpose
          env:
          - {name: CA, valueFrom: {secretKeyRef: {name: gateway-trust, key: ca.crt}}}
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: subpath
    namespace: gw
    annotations: {rotate-certs.dev/reload: hot}
  spec:
    replicas: 2
    selector: {matchLabels: {app: subpath}}
    template:
      metadata:
        labels: {app: subpath}
        annotations:
          team: edge # owned by the edge team
      spec:
        containers:
        - name: app
          image: example.com/app:v1
          volumeMounts: [{name: ca, mountPath: /etc/ca.crt, subPath: ca.crt}]
        volumes:
        - {name: ca, secret: {secretName: gateway-trust}}
- apiVersion: apps/v1
  kind: StatefulSet
  metadata:
    name: volume
    namespace: gw
  spec:
    replicas: 3
    serviceName: volume
    selector: {matchLabels: {app: volume}}
    template:
      metadata:
        labels: {app: volume}
      spec:
        containers:
        - name: app
          image: example.com/app:v1
          volumeMounts: [{name: ca, mountPath: /etc/ca}]
        volumes:
        - {name: ca, projected: {sources: [{secret: {name: gateway-trust}}]}}
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: hot
    namespace: gw
    annotations: {rotate-certs.dev/reload: hot}
  spec:
    replicas: 2
    selector: {matchLabels: {app: hot}}
    template:
      metadata:
        labels: {app: hot}
      spec:
        containers:
        - name: app
          image: example.com/app:v1
          volumeMounts: [{name: ca, mountPath: /etc/ca}]
        volumes:
        - {name: ca, secret: {secretName: gateway-trust}}
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: never
    namespace: gw
    annotations: {rotate-certs.dev/reload: never}
  spec:
    replicas: 2
    selector: {matchLabels: {app: never}}
    template:
      metadata:
        labels: {app: never}
      spec:
        containers:
        - name: app
          image: example.com/app:v1
          env:
          - {name: CA, valueFrom: {secretKeyRef: {name: gateway-trust, key: ca.crt}}}
- apiVersion: argoproj.io/v1alpha1
  kind: Rollout
  metadata:
    name: both
    namespace: gw
  spec:
    replicas: 2
    selector: {matchLabels: {app: both}}
    template:
      metadata:
        labels: {app: both}
      spec:
        initContainers:
        - name: init
          image: example.com/init:v1
          envFrom: [{secretRef: {name: gateway-trust}}]
        containers:
        - name: app
          image: example.com/app:v1
          envFrom: [{configMapRef: {name: signers}}]
- apiVersion: apps/v1
  kind: DaemonSet
  metadata:
    name: signers-only
    namespace: gw
  spec:
    selector: {matchLabels: {app: signers-only}}
    template:
      metadata:
        labels: {app: signers-only}
      spec:
        containers:
        - name: app
          image: example.com/app:v1
          env:
          - {name: SIGNERS, valueFrom: {configMapKeyRef: {name: signers, key: ca-bundle.crt}}}
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: job
    namespace: gw
  spec:
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: job
          image: example.com/job:v1
          env:
          - {name: CA, valueFrom: {secretKeyRef: {name: gateway-trust, key: ca.crt}}}
- # unrelated: reads nothing of the bundles
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: unrelated
    namespace: gw
    labels:
      tier: "backend"   # double-quoted
  spec:
    replicas: 1 # one is enough
    selector: {matchLabels: {app: unrelated}}
    template:
      metadata:
        labels: {app: unrelated}
      spec:
        containers:
        - name: app
          image: 'example.com/unrelated:v1'
          env:
          - {name: OTHER, valueFrom: {secretKeyRef: {name: other, key: ca.crt}}}
`

// restartRender is one render: its bytes and its items by key.
type restartRender struct {
	out   []byte
	items map[kube.Key]string
	nodes []*yaml.RNode
	fnCfg *yaml.RNode
}

func renderRestart(t *testing.T, in []byte) restartRender {
	t.Helper()
	out, err := execute(t, in)
	require.NoError(t, err, string(out))
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(out), KeepReaderAnnotations: true}
	nodes, err := rw.Read()
	require.NoError(t, err)
	r := restartRender{out: out, items: map[kube.Key]string{}, nodes: nodes, fnCfg: rw.FunctionConfig}
	for _, n := range nodes {
		r.items[kube.KeyOf(n)] = n.MustString()
	}
	return r
}

// input turns a render's output back into an input ResourceList (same
// items and policy, no results), editing it first with edit when not nil.
func (r restartRender) input(t *testing.T, edit func(items []*yaml.RNode)) []byte {
	t.Helper()
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(r.out), KeepReaderAnnotations: true}
	nodes, err := rw.Read()
	require.NoError(t, err)
	if edit != nil {
		edit(nodes)
	}
	var buf bytes.Buffer
	w := kio.ByteWriter{Writer: &buf, KeepReaderAnnotations: true, FunctionConfig: rw.FunctionConfig, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}
	require.NoError(t, w.Write(nodes))
	return buf.Bytes()
}

func trustHashOf(t *testing.T, item string) string {
	t.Helper()
	n, err := yaml.Parse(item)
	require.NoError(t, err)
	path := []string{"spec", "template", "metadata", "annotations", restart.TrustHashAnnotation}
	v, err := n.Pipe(yaml.Lookup(path...))
	require.NoError(t, err)
	if v == nil {
		return ""
	}
	return v.YNode().Value
}

// withoutTrustHash returns item without the pod template's trust-hash
// annotation, and without the annotations map when that leaves it empty
// (or it was null): what must be left of a rolled workload is the input.
func withoutTrustHash(t *testing.T, item string) string {
	t.Helper()
	n, err := yaml.Parse(item)
	require.NoError(t, err)
	meta, err := n.Pipe(yaml.Lookup("spec", "template", "metadata"))
	require.NoError(t, err)
	if meta == nil {
		return item
	}
	annos := meta.Field("annotations")
	if annos == nil {
		return item
	}
	if annos.Value.YNode().Kind == yaml.MappingNode && annos.Value.Field(restart.TrustHashAnnotation) != nil {
		require.NoError(t, annos.Value.PipeE(yaml.Clear(restart.TrustHashAnnotation)))
	}
	if len(annos.Value.YNode().Content) == 0 {
		require.NoError(t, meta.PipeE(yaml.Clear("annotations")))
	}
	return n.MustString()
}

func gwKey(kind, name string) kube.Key { return kube.Key{Kind: kind, Namespace: "gw", Name: name} }

func TestRotationRollsExactlyTheConsumersOfTheChangedBundle(t *testing.T) {
	in0, err := testpki.ExpandTemplate("rotation", restartRotationInput)
	require.NoError(t, err)

	// Stage 0: first render with CA1 (ca-2025), which the committed target
	// already holds. Feeding the output back changes no byte.
	r0 := renderRestart(t, in0)
	again := renderRestart(t, r0.input(t, nil))
	require.Equal(t, r0.items, again.items, "re-rendering the output must change nothing")
	require.Equal(t, string(r0.out), string(renderRestart(t, in0).out), "same input, same bytes")

	// Stage 1: the gateway source now holds CA2 (ca-2026) only.
	in1 := r0.input(t, func(items []*yaml.RNode) {
		for _, n := range items {
			if kube.KeyOf(n) == gwKey("Secret", "envoy-gateway") {
				_, changed, err := trustbundle.SetValue(n, "ca.crt", testpki.Fixture("ca-2026").PEM())
				require.NoError(t, err)
				require.True(t, changed)
			}
		}
	})
	r1 := renderRestart(t, in1)
	require.Equal(t, string(r1.out), string(renderRestart(t, in1).out), "same input, same bytes")

	checkOnlyConsumersRolled(t, r0, r1)
	// The consumers of the changed bundle that must not roll, and the
	// unrelated workload, never got a trust-hash.
	for _, name := range []string{"hot", "never", "unrelated"} {
		assert.Empty(t, trustHashOf(t, r1.items[gwKey("Deployment", name)]), name)
	}
	assert.Empty(t, trustHashOf(t, r1.items[gwKey("Job", "job")]))
	// Comments and quoting of the unrelated workload survive the
	// pipeline from the very input.
	assert.Contains(t, r1.items[gwKey("Deployment", "unrelated")], `replicas: 1 # one is enough`)
	assert.Contains(t, r1.items[gwKey("Deployment", "unrelated")], `image: 'example.com/unrelated:v1'`)
	assert.Contains(t, r1.items[gwKey("Deployment", "subpath")], `team: edge # owned by the edge team`)

	// Feeding the rotated output back changes nothing.
	r2 := renderRestart(t, r1.input(t, nil))
	assert.Equal(t, r1.items, r2.items, "re-rendering the rotated output must change nothing")

	// The same trust always hashes the same: a workload that consumes
	// only gateway has the same hash as another that consumes only it.
	assert.Equal(t, trustHashOf(t, r1.items[gwKey("Deployment", "env")]), trustHashOf(t, r1.items[gwKey("StatefulSet", "volume")]))
	assert.NotEqual(t, trustHashOf(t, r1.items[gwKey("Deployment", "env")]), trustHashOf(t, r1.items[gwKey("Rollout", "both")]),
		"a workload that consumes two bundles hashes both")
}

// checkOnlyConsumersRolled: from r0 to r1 exactly the consumers of the
// changed gateway bundle that must roll got a new trust-hash and nothing
// else of them changed; the source and the target changed; every other
// item is byte-identical.
func checkOnlyConsumersRolled(t *testing.T, r0, r1 restartRender) {
	t.Helper()
	rolled := map[kube.Key]bool{
		gwKey("Deployment", "env"):     true, // env
		gwKey("Deployment", "subpath"): true, // subPath, even though hot
		gwKey("StatefulSet", "volume"): true, // whole volume, not hot
		gwKey("Rollout", "both"):       true, // envFrom of gateway (and signers)
	}
	changedObjects := map[kube.Key]bool{
		gwKey("Secret", "envoy-gateway"): true, // edited by the test
		gwKey("Secret", "gateway-trust"): true, // the rotated bundle
	}
	keys := make([]kube.Key, 0, len(r1.items))
	for k := range r1.items {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	require.Len(t, keys, len(r0.items), "no item may appear or vanish")
	for _, k := range keys {
		before, after := r0.items[k], r1.items[k]
		require.NotEmpty(t, before, "%s missing before", k)
		h0, h1 := trustHashOf(t, before), trustHashOf(t, after)
		switch {
		case rolled[k]:
			// The first render adopts a gateway target that already holds
			// the right CA: that trust did not change, so its consumers do
			// not roll yet - except the Rollout, which also reads the
			// signers bundle that the first render creates.
			if k == gwKey("Rollout", "both") {
				assert.NotEmpty(t, h0, "%s: reads a bundle created at the first render", k)
			} else {
				assert.Empty(t, h0, "%s: adopting an unchanged target must not roll", k)
			}
			assert.NotEqual(t, h0, h1, "%s: a consumer of the changed bundle must roll", k)
			assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, h1)
			assert.Equal(t, withoutTrustHash(t, before), withoutTrustHash(t, after), "%s: only the trust-hash may change", k)
		case changedObjects[k]:
			assert.NotEqual(t, before, after, "%s", k)
		default:
			assert.Equal(t, before, after, "%s: must be byte-identical", k)
		}
	}
}

func TestUnchangedGoldenIsByteIdentical(t *testing.T) {
	in := goldenInput(t, goldenDir+"/restart-unchanged")
	r := renderRestart(t, in)
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(in), KeepReaderAnnotations: true}
	nodes, err := rw.Read()
	require.NoError(t, err)
	require.Len(t, r.items, len(nodes))
	for _, n := range nodes {
		assert.Equal(t, n.MustString(), r.items[kube.KeyOf(n)], "%s", kube.KeyOf(n))
	}
}
