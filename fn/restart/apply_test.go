package restart

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// apply is Run's results.
func apply(bundles []Bundle, env Env) framework.Results { return Run(bundles, env).Results }

func parseItems(t *testing.T, docs ...string) []*yaml.RNode {
	t.Helper()
	var out []*yaml.RNode
	for _, d := range docs {
		out = append(out, mustParse(t, d))
	}
	return out
}

func deployment(ns, name, annotations, podSpec string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
		"\n  annotations: {" + annotations + "}\nspec:\n  replicas: 2\n  template:\n    metadata:\n      labels: {app: " + name + "}\n    spec:\n" + podSpec
}

const readsTrustEnv = "      containers:\n      - name: c\n        env:\n        - {name: CA, valueFrom: {secretKeyRef: {name: trust, key: ca.crt}}}\n"
const readsNothing = "      containers:\n      - name: c\n"

func trustTarget(ns, hash string, changed bool) Target {
	return Target{Key: kube.Key{Kind: "Secret", Namespace: ns, Name: "trust"}, Hash: hash, Changed: changed}
}

func hashOf(t *testing.T, n *yaml.RNode) string {
	t.Helper()
	w, err := readNode(n)
	require.NoError(t, err)
	h, _ := w.trustHash()
	return h
}

func yes() *bool { v := true; return &v }
func no() *bool  { v := false; return &v }

func TestApplyMatchesByNamespaceAndKind(t *testing.T) {
	items := parseItems(t,
		deployment("a", "reader", "", readsTrustEnv),
		deployment("b", "reader", "", readsTrustEnv), // another namespace: another object
		deployment("a", "cm-reader", "", "      containers:\n      - name: c\n        envFrom: [{configMapRef: {name: trust}}]\n"), // a ConfigMap named like the Secret
		deployment("a", "idle", "", readsNothing),
	)
	b := Bundle{Name: "gw", Field: "spec.trustBundles[0]", Targets: []Target{trustTarget("a", "sha256:01", true)}, Restart: policy.Restart{Auto: yes()}}
	results := apply([]Bundle{b}, Env{Items: items})
	assert.Equal(t, trustHash([]bundleHash{{"gw", "sha256:01"}}), hashOf(t, items[0]))
	for _, n := range items[1:] {
		assert.Empty(t, hashOf(t, n), n.GetNamespace()+"/"+n.GetName())
	}
	require.Len(t, results, 1)
	assert.Equal(t, "reader", results[0].ResourceRef.Name)
	assert.Equal(t, framework.Info, results[0].Severity)
}

func TestApplyExplicitWorkloads(t *testing.T) {
	rollout := "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: borrowed, namespace: a}\nspec:\n  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: reader}\n"
	items := parseItems(t,
		deployment("a", "reader", "", readsTrustEnv),
		deployment("c", "elsewhere", "", readsNothing),
		deployment("a", "opted-out", "rotate-certs.dev/reload: never", readsNothing),
		rollout,
	)
	targets := []Target{trustTarget("a", "sha256:01", true), trustTarget("b", "sha256:02", false)}
	b := Bundle{Name: "gw", Field: "spec.trustBundles[0]", Targets: targets, Restart: policy.Restart{
		Auto: no(),
		Workloads: []policy.WorkloadRef{
			{Kind: "Deployment", Namespace: "c", Name: "elsewhere"},
			{Kind: "Deployment", Namespace: "a", Name: "opted-out"},
			{Kind: "Rollout", Namespace: "a", Name: "borrowed"},
			{Kind: "StatefulSet", Namespace: "a", Name: "reader"}, // right name, wrong kind
		},
	}}
	results := apply([]Bundle{b}, Env{Items: items, PolicyRef: kube.Ref{Kind: "RotationPolicy", Name: "p"}})

	assert.Empty(t, hashOf(t, items[0]), "auto is off: a detected consumer is not rolled")
	across, isAcross := targetFor(b, "c")
	require.True(t, isAcross)
	assert.True(t, across.Changed, "changed when any target changed")
	assert.Equal(t, trustHash([]bundleHash{{"gw", across.Hash}}), hashOf(t, items[1]))
	assert.Empty(t, hashOf(t, items[2]), "never wins over restart.workloads")

	var got []string
	for _, r := range results {
		got = append(got, string(r.Severity)+" "+r.ResourceRef.Kind+" "+r.ResourceRef.Name+": "+r.Message)
	}
	joined := strings.Join(got, "\n")
	assert.Contains(t, joined, "warning RotationPolicy p: bundle \"gw\": Rollout a/borrowed has no pod template of its own")
	assert.Contains(t, joined, "info RotationPolicy p: bundle \"gw\": StatefulSet a/reader is not in the input")
	assert.Contains(t, joined, "info Deployment elsewhere: rolled")
	assert.Contains(t, joined, "warning Deployment opted-out: not rolled for bundle \"gw\"")
	assert.Contains(t, joined, "which wins over restart.workloads")
}

func TestTargetFor(t *testing.T) {
	one := Bundle{Targets: []Target{trustTarget("a", "sha256:01", false)}}
	two := Bundle{Targets: []Target{trustTarget("a", "sha256:01", false), trustTarget("b", "sha256:02", true)}}
	swapped := Bundle{Targets: []Target{trustTarget("b", "sha256:02", true), trustTarget("a", "sha256:01", false)}}

	got, across := targetFor(two, "b")
	assert.False(t, across)
	assert.Equal(t, two.Targets[1], got)

	got, across = targetFor(one, "z")
	assert.True(t, across)
	assert.Equal(t, "sha256:01", got.Hash, "a single target stands for itself")

	all, across := targetFor(two, "z")
	assert.True(t, across)
	assert.True(t, all.Changed)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, all.Hash)
	again, _ := targetFor(swapped, "z")
	assert.Equal(t, all.Hash, again.Hash, "target order must not matter")
}

func TestApplyReportsUnreadableWorkloadsAndGoesOn(t *testing.T) {
	items := parseItems(t,
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: broken, namespace: a}\nspec: {replicas: 1}\n",
		deployment("a", "reader", "", readsTrustEnv),
	)
	b := Bundle{Name: "gw", Targets: []Target{trustTarget("a", "sha256:01", true)}, Restart: policy.Restart{
		Auto: yes(), Workloads: []policy.WorkloadRef{{Kind: "Deployment", Namespace: "a", Name: "broken"}},
	}}
	results := apply([]Bundle{b}, Env{Items: items})
	require.Len(t, results, 2, "one error for the broken workload (not also an 'absent' info), one info for the reader")
	assert.Equal(t, framework.Error, results[0].Severity)
	assert.Equal(t, "spec.template", results[0].Field.Path)
	assert.NotEmpty(t, hashOf(t, items[1]))
}

func TestApplyIsQuietWhenNothingChanged(t *testing.T) {
	items := parseItems(t,
		deployment("a", "reader", "", readsTrustEnv),
		deployment("a", "hot", "rotate-certs.dev/reload: hot", "      containers:\n      - name: c\n        volumeMounts: [{name: v, mountPath: /v}]\n      volumes: [{name: v, secret: {secretName: trust}}]\n"),
	)
	before := []string{items[0].MustString(), items[1].MustString()}
	b := Bundle{Name: "gw", Targets: []Target{trustTarget("a", "sha256:01", false)}, Restart: policy.Restart{Auto: yes()}}
	assert.Empty(t, apply([]Bundle{b}, Env{Items: items}))
	assert.Equal(t, before, []string{items[0].MustString(), items[1].MustString()})
}

// TestTargetForAcrossFollowsTheSets: a workload that reads the bundle where
// it has no target stands for every target; its trust changes when the set
// of CAs some target holds changes, not when a copy of the same set is
// created in another namespace, and its hash does not depend on which
// namespaces hold a copy.
func TestTargetForAcrossFollowsTheSets(t *testing.T) {
	created := func(ns, hash string) Target {
		tg := trustTarget(ns, hash, true)
		tg.Created = true
		return tg
	}
	a, b := trustTarget("a", "sha256:01", false), trustTarget("b", "sha256:01", false)
	tests := []struct {
		name     string
		targets  []Target
		changed  bool
		sameHash bool // the hash of the unchanged a and b
	}{
		{"unchanged", []Target{a, b}, false, true},
		{"a copy of the same set in a new namespace", []Target{a, b, created("c", "sha256:01")}, false, true},
		{"the same, listed first", []Target{created("c", "sha256:01"), b, a}, false, true},
		{"a new namespace holding another set", []Target{a, b, created("c", "sha256:02")}, true, false},
		{"a target's set changed", []Target{trustTarget("a", "sha256:02", true), b}, true, false},
		{"every target created", []Target{created("a", "sha256:01"), created("b", "sha256:01")}, true, true},
	}
	base, _ := targetFor(Bundle{Targets: []Target{a, b}}, "z")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, across := targetFor(Bundle{Targets: tt.targets}, "z")
			require.True(t, across)
			assert.Equal(t, tt.changed, got.Changed, "Changed")
			assert.Equal(t, tt.sameHash, got.Hash == base.Hash, "hash %s against %s", got.Hash, base.Hash)
		})
	}
}
