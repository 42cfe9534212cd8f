package rotate_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// wavesInput is a package whose CA was just replaced in its source: ten
// Deployments read the bundle through env (they must roll), the target
// still holds the old CA alone, and the policy spreads the roll over waves
// of 30%, two days apart; retain.for would drop the old CA a day after it
// retires.
func wavesInput(t *testing.T) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata:
    name: fleet
  spec:
    now: "2026-11-22T00:00:00Z"
    trustBundles:
    - name: gateway
      sources:
      - secret: {name: envoy-gateway, namespace: gw}
      target:
        name: gateway-trust
        namespaces: [gw, shop]
      retain:
        for: 24h
      restart:
        waves: {size: 30%, interval: 48h}
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: envoy-gateway, namespace: gw}
  data:
    ca.crt: {{b64 "ca-2026"}}
`)
	for _, ns := range []string{"gw", "shop"} {
		fmt.Fprintf(&b, `- apiVersion: v1
  kind: Secret
  metadata:
    name: gateway-trust
    namespace: %s
    annotations:
      rotate-certs.dev/bundle-hash: {{bundlehash "ca-2025"}}
      rotate-certs.dev/retired: ""
  data:
    ca.crt: {{b64 "ca-2025"}}
`, ns)
	}
	for i := range 10 {
		ns := []string{"gw", "shop"}[i%2]
		fmt.Fprintf(&b, `- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: app-%d, namespace: %s}
  spec:
    replicas: 2
    selector: {matchLabels: {app: app-%d}}
    template:
      metadata:
        labels: {app: app-%d}
        annotations: {rotate-certs.dev/trust-hash: {{trusthash "gateway" "ca-2025"}}}
      spec:
        containers:
        - name: app
          image: registry.example/app:1
          env:
          - {name: CA, valueFrom: {secretKeyRef: {name: gateway-trust, key: ca.crt}}}
`, i, ns, i, i)
	}
	in, err := testpki.ExpandTemplate("waves", b.String())
	require.NoError(t, err)
	return in
}

// wavesRender is one render of the package: its output and what it holds.
type wavesRender struct {
	out    []byte
	hashes map[string]string // workload -> trust-hash
	items  map[kube.Key]string
}

func renderWaves(t *testing.T, in []byte, now time.Time) wavesRender {
	t.Helper()
	rl, err := yaml.Parse(string(in))
	require.NoError(t, err)
	require.NoError(t, rl.PipeE(yaml.Clear("results")))
	spec, err := rl.Pipe(yaml.Lookup("functionConfig", "spec"))
	require.NoError(t, err)
	require.NoError(t, spec.PipeE(yaml.SetField("now", yaml.NewStringRNode(now.Format(time.RFC3339)))))
	out, err := execute(t, []byte(rl.MustString()))
	require.NoError(t, err, string(out))
	r := wavesRender{out: out, hashes: map[string]string{}, items: map[kube.Key]string{}}
	for _, it := range parseResourceList(t, out).items {
		r.items[kube.KeyOf(it)] = it.MustString()
		if it.GetKind() == "Deployment" {
			r.hashes[it.GetName()] = trustHashOf(t, it.MustString())
		}
	}
	return r
}

// moved returns the workloads whose trust-hash differs between a and b.
func moved(a, b wavesRender) []string {
	var out []string
	for name, h := range b.hashes {
		if a.hashes[name] != h {
			out = append(out, name)
		}
	}
	return out
}

// trusts returns the CAs of the gw target.
func trusts(t *testing.T, r wavesRender) []string {
	t.Helper()
	node, err := yaml.Parse(r.items[kube.Key{Kind: "Secret", Namespace: "gw", Name: "gateway-trust"}])
	require.NoError(t, err)
	return keySubjects(t, node)
}

// The waves of one trust change over renders with a moving --now: a
// re-render before a wave is due changes nothing; each due wave changes
// exactly its workloads' trust-hash; the previous CA stays until the last
// wave has rolled (and one interval more), although retain.for ran out on
// the second day; a render far in the future rolls every wave that is
// due, once.
func TestWavesOverRenders(t *testing.T) {
	day := func(n float64) time.Time { return testpki.GoldenNow.Add(time.Duration(n * 24 * float64(time.Hour))) }
	start := renderWaves(t, wavesInput(t), day(0))
	assert.Empty(t, moved(renderWaves(t, wavesInput(t), day(0)), start), "deterministic")
	rolledOnce := map[string]int{}
	count := func(names []string) {
		for _, n := range names {
			rolledOnce[n]++
		}
	}
	initial := map[string]string{}
	for name := range start.hashes {
		initial[name] = testpkiTrustHash(t, "ca-2025")
	}
	wave1 := moved(wavesRender{hashes: initial}, start)
	require.Len(t, wave1, 3, "wave 1 of 4 (30%% of 10, rounded up)")
	count(wave1)
	assert.ElementsMatch(t, []string{"ca-2026", "ca-2025"}, trusts(t, start))

	same := renderWaves(t, start.out, day(1.5))
	assert.Equal(t, start.items, same.items, "a re-render before wave 2 is due changes nothing, although retain.for has run out")

	prev := same
	for n, wave := range []float64{2, 4, 6} {
		r := renderWaves(t, prev.out, day(wave))
		got := moved(prev, r)
		assert.NotEmpty(t, got, "wave %d", n+2)
		count(got)
		for key, item := range r.items {
			if key.Kind == "Deployment" && !slices.Contains(got, key.Name) {
				assert.Equal(t, prev.items[key], item, "%s is not in wave %d", key, n+2)
			}
		}
		assert.ElementsMatch(t, []string{"ca-2026", "ca-2025"}, trusts(t, r), "the previous CA stays while waves are pending")
		prev = r
		if wave == 4 {
			break
		}
	}
	// Skip the renders of the last wave: a render long after rolls it.
	late := renderWaves(t, prev.out, day(60))
	count(moved(prev, late))
	assert.ElementsMatch(t, []string{"ca-2026", "ca-2025"}, trusts(t, late), "the last wave rolls now: its workloads still run with the old CA")
	again := renderWaves(t, late.out, day(60))
	assert.Equal(t, late.items, again.items, "the same --now again rolls nothing")
	require.Len(t, rolledOnce, 10)
	for name, n := range rolledOnce {
		assert.Equal(t, 1, n, "%s rolls once for the change", name)
	}
	record := kube.Key{Kind: "Secret", Namespace: "gw", Name: "gateway-trust"}
	assert.Contains(t, late.items[record], "rolled=4/4")

	// An interval after the last wave, the hold ends: retain.for drops
	// the old CA, and that change starts a roll-out of its own.
	after := renderWaves(t, late.out, day(62))
	assert.Equal(t, []string{"ca-2026"}, trusts(t, after))
	assert.Len(t, moved(late, after), 3, "the drop is a trust change: wave 1 of its own roll-out")
	assert.Contains(t, after.items[record], "started="+day(62).Format(time.RFC3339))
}

// testpkiTrustHash is the trust-hash of a workload that rolled for bundle
// gateway holding names.
func testpkiTrustHash(t *testing.T, names ...string) string {
	t.Helper()
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	out, err := testpki.ExpandTemplate("h", `{{trusthash "gateway" `+strings.Join(q, " ")+`}}`)
	require.NoError(t, err)
	return string(out)
}
