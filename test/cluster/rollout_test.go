package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/controlplane"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A rollout scenario: a package before the rotation and the workloads the
// render must roll.
type scenario struct {
	name string
	// top is the directory under examples/ to stage; dir the package in it.
	top, dir string
	// policy is the RotationPolicy file, relative to the package.
	policy string
	// kustomizeRuns says the package's kustomization runs the function;
	// otherwise (a package CI renders and commits) the kustomize pipeline
	// renders with `rotate-certs render` and builds a plain kustomization
	// of the rendered files, as Flux does.
	kustomizeRuns bool
	// crds returns CRD files the package's kinds need.
	crds func(t *testing.T) []string
	// storageGroup and storageVersions, when set, run the scenario once
	// per version with the CRDs of that group storing it (see
	// withStorage): objects of another version are not compared on
	// re-apply in that run.
	storageGroup    string
	storageVersions []string
	// rolled are the workloads ("Kind namespace/name") the render rolls;
	// every other workload must not roll.
	rolled []string
	// annotated are workloads whose controller does not run here (an Argo
	// Rollout): the render must give their pod template a trust-hash.
	annotated []string
	// chart, when set, is a Helm chart (relative to the package): the
	// scenario runs `helm template` with rotate-certs as the post-renderer
	// instead of render and kustomize.
	chart string
	// ownTest names the test that measures the example instead of
	// TestExampleRollouts: its rotation takes more than one render.
	ownTest string
	// applied, when set, checks what the API server holds after the
	// render was applied.
	applied func(t *testing.T, cp *controlplane.ControlPlane)
}

var exampleScenarios = []scenario{
	{name: "envoy-gateway", top: "envoy-gateway", dir: "envoy-gateway", policy: "rotation-policy.yaml", kustomizeRuns: true,
		rolled: []string{"Deployment envoy-gateway-system/envoy-ratelimit"}},
	{name: "kyma-gateway", top: "kyma-gateway", dir: "kyma-gateway", policy: "rotation-policy.yaml", kustomizeRuns: true},
	{name: "multi-signer", top: "multi-signer", dir: "multi-signer", policy: "rotation-policy.yaml", kustomizeRuns: true},
	{name: "argocd", top: "argocd", dir: "argocd/app", policy: "rotation-policy.yaml", kustomizeRuns: true},
	{name: "ci", top: "ci", dir: "ci/clusters/prod", policy: "rotation-policy.yaml"},
	{name: "cluster-api", top: "cluster-api", dir: "cluster-api", policy: "rotation-policy.yaml", kustomizeRuns: true,
		crds: func(t *testing.T) []string {
			return clusterAPICRDs(t, "KubeadmControlPlane", "KubeadmControlPlaneTemplate", "ClusterClass")
		},
		storageGroup: "controlplane.cluster.x-k8s.io", storageVersions: []string{"v1beta2", "v1beta1"}},
	{name: "eks-anywhere-etcd", top: "eks-anywhere-etcd", dir: "eks-anywhere-etcd", policy: "rotation-policy.yaml", kustomizeRuns: true,
		crds: func(*testing.T) []string {
			return []string{standInCRD("etcdadmclusters"), standInCRD("vspheremachinetemplates")}
		}},
	// Trust the API server itself reads, a trust-manager Bundle, and a
	// snapshot source: no workload reads them, so nothing rolls.
	{name: "webhooks", top: "webhooks", dir: "webhooks", policy: "rotation-policy.yaml", kustomizeRuns: true},
	{name: "trust-manager", top: "trust-manager", dir: "trust-manager", policy: "rotation-policy.yaml", kustomizeRuns: true,
		crds: func(t *testing.T) []string { return []string{trustManagerBundleCRD(t)} }},
	{name: "in-cluster-ca", top: "in-cluster-ca", dir: "in-cluster-ca", policy: "rotation-policy.yaml", kustomizeRuns: true},
	{name: "helm", top: "helm", dir: "helm", policy: "rotation-policy.yaml", chart: "chart",
		rolled: []string{"Deployment envoy-gateway-system/envoy-ratelimit"}},
	{name: "waves", top: "waves", ownTest: "TestWavesRollout"},
	// Chains: an anchor or root that signs an issuer or intermediate. The
	// Linkerd control plane reads the anchors through env and rolls;
	// istiod reloads cacerts by itself; cert-manager's Certificates and
	// ClusterIssuers are applied under cert-manager's CRDs. restart.mesh
	// rolls exactly the workloads each mesh's injector injects: not
	// emojivoto/vote-bot and shop/payments (opted out in their pod
	// templates), not tools/metrics-scraper (no injection asked) and not
	// legacy/inventory-db (injection disabled for its namespace).
	{name: "linkerd", top: "linkerd", dir: "linkerd", policy: "rotation-policy.yaml", kustomizeRuns: true,
		rolled: []string{"Deployment linkerd/linkerd-identity", "Deployment linkerd/linkerd-destination",
			"Deployment linkerd/linkerd-proxy-injector", "Deployment emojivoto/web", "Deployment emojivoto/emoji",
			"Deployment emojivoto/voting", "Deployment tools/debug-shell"}},
	// One cluster of the multicluster example, as kustomize builds it: a
	// partial view of its trust domain (the render keeps the old anchor,
	// with a warning).
	{name: "multicluster", top: "multicluster", dir: "multicluster/clusters/east", policy: "rotation-policy.yaml", kustomizeRuns: true,
		rolled: []string{"Deployment linkerd/linkerd-identity", "Deployment linkerd-multicluster/linkerd-gateway"}},
	{name: "istio", top: "istio", dir: "istio", policy: "rotation-policy.yaml", kustomizeRuns: true,
		rolled: []string{"Deployment shop/checkout", "Deployment catalog/search"}},
	{name: "cert-manager", top: "cert-manager", dir: "cert-manager", policy: "rotation-policy.yaml", kustomizeRuns: true,
		crds:   certManagerCRDs,
		rolled: []string{"Deployment billing/billing-api", "Deployment shop/checkout"}},
	// A cert-manager root distributed by a trust-manager Bundle, under both
	// projects' CRDs: the first render pins the root in the Bundle and
	// rolls nothing. trust-manager already puts that root in the ConfigMap
	// the Deployments mount, so adopting the Bundle changes no trust a
	// pod reads (docs/guides/restarts.md, the trust-hash rule).
	{name: "cert-manager-renewal", top: "cert-manager-renewal", dir: "cert-manager-renewal", policy: "rotation-policy.yaml", kustomizeRuns: true,
		crds:    func(t *testing.T) []string { return append(certManagerCRDs(t), trustManagerBundleCRD(t)) },
		applied: requireBundlePin("internal-trust", "internal", "example-internal-root-old")},
}

// Every example directory has a scenario: a new example cannot be left out.
func TestEveryExampleHasARolloutScenario(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(repoRoot, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !slices.ContainsFunc(exampleScenarios, func(s scenario) bool { return s.top == e.Name() }) {
			t.Errorf("examples/%s has no rollout scenario in exampleScenarios", e.Name())
		}
	}
}

// TestExampleRollouts applies each example as it is before the rotation,
// then its render, on a real API server with the Deployment controller
// running: each workload the render rolls gets exactly one new ReplicaSet,
// every other workload none; applying a second render, and a render a week
// later with the same certificates, changes no object at all and meets no
// field-manager conflict. Once with `rotate-certs render` (what kpt and CI
// commit) applied by `kubectl apply --server-side`, once through a real
// `kustomize build --enable-alpha-plugins --enable-exec | kubectl apply
// --server-side` pipe.
func TestExampleRollouts(t *testing.T) {
	controlplane.RequireBinaries(t)
	for _, sc := range exampleScenarios {
		if sc.ownTest != "" {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			storage := sc.storageVersions
			if storage == nil {
				storage = []string{""}
			}
			if sc.chart != "" {
				t.Run("helm", func(t *testing.T) {
					helm := e2eharness.Tool(t, "helm")
					root := stage(t, sc.top)
					runRollout(t, sc, "", filepath.Join(root, "examples", sc.dir), helmPipeline(helm, filepath.Join(root, "bin"), sc.chart))
				})
				return
			}
			for _, version := range storage {
				name := func(p string) string {
					if version == "" {
						return p
					}
					return p + "/storage-" + version
				}
				t.Run(name("render"), func(t *testing.T) {
					root := stage(t, sc.top)
					runRollout(t, sc, version, filepath.Join(root, "examples", sc.dir), renderPipeline(filepath.Join(root, "bin")))
				})
				t.Run(name("kustomize"), func(t *testing.T) {
					kustomize := e2eharness.Tool(t, "kustomize")
					root := stage(t, sc.top)
					runRollout(t, sc, version, filepath.Join(root, "examples", sc.dir), kustomizePipeline(kustomize, filepath.Join(root, "bin"), sc.kustomizeRuns))
				})
			}
		})
	}
}

// A pipeline renders the package in dir and applies the result to the
// control plane, returning the stream it applied. manager is the field
// manager its applies use ("" for kubectl's default).
type pipeline struct {
	manager string
	// commits says the pipeline writes the render back into the package
	// (rotate-certs render, as CI commits it) before it applies: the next
	// render reads the retirement record this one wrote. A pipeline that
	// renders at build time (kustomize running the function, Helm's
	// post-renderer) keeps nothing: each build of the rotation records the
	// build's time.
	commits bool
	run     func(t *testing.T, cp *controlplane.ControlPlane, dir, policy string) string
	// before returns what the package applies before the rotation; nil
	// means its resources as they are in git (clusterResources).
	before func(t *testing.T, dir string) string
}

// helmPipeline renders a chart with `helm template`, rotate-certs as the
// post-renderer with the package's policy, and applies the manifests, as
// `helm upgrade --post-renderer` would. Before the rotation the release is
// the chart's own manifests, without the post-renderer.
func helmPipeline(helm, binDir, chart string) pipeline {
	template := func(t *testing.T, dir string, args ...string) string {
		t.Helper()
		return mustCommand(t, dir, nil, "", helm, append([]string{"template", "gateway", chart, "--namespace", "envoy-gateway-system"}, args...)...)
	}
	return pipeline{manager: fieldManager,
		before: func(t *testing.T, dir string) string { return template(t, dir) },
		run: func(t *testing.T, cp *controlplane.ControlPlane, dir, policy string) string {
			t.Helper()
			stream := template(t, dir, "--post-renderer", filepath.Join(binDir, "rotate-certs"),
				"--post-renderer-args", "helm-post-renderer", "--post-renderer-args", "--policy="+filepath.Join(dir, policy))
			apply(t, cp, stream, fieldManager)
			return stream
		}}
}

// renderPipeline renders in place with `rotate-certs render`, as kpt or a
// CI job commits it, and applies the package's resources.
func renderPipeline(binDir string) pipeline {
	return pipeline{manager: fieldManager, commits: true, run: func(t *testing.T, cp *controlplane.ControlPlane, dir, policy string) string {
		t.Helper()
		mustCommand(t, dir, nil, "", filepath.Join(binDir, "rotate-certs"), "render", ".", "--policy", policy)
		stream := clusterResources(t, dir)
		apply(t, cp, stream, fieldManager)
		return stream
	}}
}

// kustomizePipeline runs `kustomize build ... | tee | kubectl apply
// --server-side -f -` in one shell pipe, with the function binary on PATH
// (the Argo CD example names it by bare name, as in its sidecar).
func kustomizePipeline(kustomize, binDir string, kustomizeRuns bool) pipeline {
	return pipeline{commits: !kustomizeRuns, run: func(t *testing.T, cp *controlplane.ControlPlane, dir, policy string) string {
		t.Helper()
		if !kustomizeRuns {
			mustCommand(t, dir, nil, "", filepath.Join(binDir, "rotate-certs"), "render", ".", "--policy", policy)
			writeFluxKustomization(t, dir)
		}
		out := filepath.Join(t.TempDir(), "built.yaml")
		mustCommand(t, dir, []string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH")}, "",
			"bash", "-c", `set -euo pipefail; "$0" build --enable-alpha-plugins --enable-exec . | tee "$1" | "$2" --kubeconfig "$3" apply --server-side -f -`,
			kustomize, out, cp.Binaries.Kubectl, cp.Kubeconfig)
		stream, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		waitObserved(t, cp, string(stream))
		return string(stream)
	}}
}

// writeFluxKustomization lists every manifest of dir in a kustomization,
// as Flux's kustomize-controller generates one for a plain directory.
func writeFluxKustomization(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); err == nil {
		return
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	for _, f := range files {
		fmt.Fprintf(&b, "- %s\n", filepath.Base(f))
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runRollout is the measured rotation of one package through one pipeline
// on a control plane of its own.
func runRollout(t *testing.T, sc scenario, storage, dir string, p pipeline) {
	cp := startControlPlane(t)
	var crds []crdInfo
	if sc.crds != nil {
		files := sc.crds(t)
		if storage != "" {
			files = withStorage(t, files, sc.storageGroup, storage)
		}
		installCRDs(t, cp, files...)
		crds = readCRDs(t, files)
	}
	policy := filepath.Join(dir, sc.policy)
	weekLater := policyNow(t, policy).Add(7 * 24 * time.Hour)

	// Before the rotation: what git holds, applied by the same field
	// manager as every later apply. Each workload has one ReplicaSet.
	var before string
	if p.before != nil {
		before = p.before(t, dir)
	} else {
		before = clusterResources(t, dir)
	}
	apply(t, cp, before, p.manager)
	s0 := snapshot(t, cp, before)
	for w, revs := range s0.revisions {
		if len(revs) != 1 {
			t.Fatalf("before the rotation %s has %d ReplicaSets/ControllerRevisions %v, want 1", w, len(revs), revs)
		}
	}
	for _, w := range sc.annotated {
		if _, ok := s0.objects[w]; !ok {
			t.Fatalf("scenario names %s as annotated, but the package has no such object", w)
		}
	}
	for _, w := range sc.rolled {
		if _, ok := s0.revisions[w]; !ok {
			t.Fatalf("scenario names %s as rolled, but the package has no such workload (workloads: %v)", w, keys(s0.revisions))
		}
	}

	skip := notStored(t, crds, before)
	if len(skip) > 0 {
		t.Logf("not compared on re-apply, stored in another version without a conversion webhook: %v", keys(skip))
	}

	rendered := p.run(t, cp, dir, sc.policy)
	s1 := snapshot(t, cp, rendered)
	for w := range s0.revisions {
		added, kept := newRevisions(s0, s1, w)
		if !kept {
			t.Errorf("%s lost a ReplicaSet/ControllerRevision: %v -> %v", w, s0.revisions[w], s1.revisions[w])
		}
		want := 0
		if slices.Contains(sc.rolled, w) {
			want = 1
			if s1.objects[w].Spec.Template.Metadata.Annotations["rotate-certs.dev/trust-hash"] == "" {
				t.Errorf("%s rolled without a rotate-certs.dev/trust-hash on its pod template", w)
			}
		}
		if len(added) != want {
			t.Errorf("the render gave %s %d new ReplicaSets/ControllerRevisions %v, want %d", w, len(added), added, want)
		}
	}

	for _, w := range sc.annotated {
		if s0.objects[w].Spec.Template.Metadata.Annotations["rotate-certs.dev/trust-hash"] != "" ||
			s1.objects[w].Spec.Template.Metadata.Annotations["rotate-certs.dev/trust-hash"] == "" {
			t.Errorf("%s: want no trust-hash before the render and one after", w)
		}
	}

	if sc.applied != nil {
		sc.applied(t, cp)
	}
	requireStable(t, cp, p, sc, dir, rendered, s1, skip, weekLater)
}

// requireBundlePin checks that the trust-manager Bundle named bundle, as the
// API server holds it, has rotate-certs' inLine source for policy bundle
// owner and that it pins the fixture root.
func requireBundlePin(bundle, owner, root string) func(t *testing.T, cp *controlplane.ControlPlane) {
	return func(t *testing.T, cp *controlplane.ControlPlane) {
		t.Helper()
		inLine := mustKubectl(t, cp, "", "get", "bundles.trust.cert-manager.io", bundle, "-o", "jsonpath={.spec.sources[*].inLine}")
		if !strings.Contains(inLine, "# managed-by: rotate-certs.dev/bundle="+owner) {
			t.Errorf("Bundle %s as applied has no inLine source of rotate-certs: %q", bundle, inLine)
		}
		pem := strings.TrimSpace(string(testpki.Fixture(root).PEM()))
		if !strings.Contains(inLine, pem) {
			t.Errorf("Bundle %s as applied does not pin %s", bundle, root)
		}
	}
}

// requireStable renders the rotated package again, at the same now and a
// week later, and requires that nothing changes: the same bytes, no
// object written, no workload rolled - except, for a pipeline that commits
// nothing, the time in the retirement record of a CA that left at this
// rotation: with no memory, each build is the render that sees it leave.
func requireStable(t *testing.T, cp *controlplane.ControlPlane, p pipeline, sc scenario, dir, rendered string, s1 state, skip map[string]bool, weekLater time.Time) {
	t.Helper()
	again := p.run(t, cp, dir, sc.policy)
	if again != rendered {
		t.Errorf("a second render differs from the first:\n--- first\n%s\n--- second\n%s", rendered, again)
	}
	requireUnchanged(t, "applying a second render", s1, snapshot(t, cp, again), skip)

	setPolicyNow(t, filepath.Join(dir, sc.policy), weekLater)
	later := p.run(t, cp, dir, sc.policy)
	s2 := snapshot(t, cp, later)
	if !p.commits {
		rendered, later = withoutRetiredTimes(rendered), withoutRetiredTimes(later)
		s1, s2 = s1.withoutRetiredTimes(), s2.withoutRetiredTimes()
	}
	if later != rendered {
		t.Errorf("a render a week later (%s) differs:\n--- first\n%s\n--- week later\n%s", weekLater.Format(time.DateOnly), rendered, later)
	}
	requireUnchanged(t, "applying a render a week later", s1, s2, skip)
}

// withoutRetiredTimes blanks the times of the retirement records in s.
func withoutRetiredTimes(s string) string { return e2eharness.WithoutRetiredTimes(s) }

// withoutRetiredTimes returns s with the times of the retirement records
// of its objects blanked.
func (s state) withoutRetiredTimes() state {
	out := s
	out.written = map[string]string{}
	for k, v := range s.written {
		out.written[k] = withoutRetiredTimes(v)
	}
	return out
}

// TestWorkloadKindsRollout is the measured rotation of testdata/workloads:
// Deployments reading the bundle through a subPath, env, a hot-reloaded
// volume, an opted-out subPath and not at all, a StatefulSet and a
// DaemonSet (a new ControllerRevision each), and an Argo Rollout under its
// upstream CRD.
func TestWorkloadKindsRollout(t *testing.T) {
	controlplane.RequireBinaries(t)
	sc := scenario{
		policy:        "rotation-policy.yaml",
		kustomizeRuns: true,
		crds:          func(t *testing.T) []string { return []string{rolloutCRD(t)} },
		rolled: []string{
			"Deployment apps/subpath-reader", "Deployment apps/env-reader",
			"StatefulSet apps/db", "DaemonSet apps/agent",
		},
		annotated: []string{"Rollout apps/canary"},
	}
	binDir := filepath.Dir(binary)
	t.Run("render", func(t *testing.T) {
		runRollout(t, sc, "", expandPackage(t, "workloads", ""), renderPipeline(binDir))
	})
	t.Run("kustomize", func(t *testing.T) {
		kustomize := e2eharness.Tool(t, "kustomize")
		runRollout(t, sc, "", expandPackage(t, "workloads", binary), kustomizePipeline(kustomize, binDir, true))
	})
}

// expandPackage expands the fixture templates of testdata/<name> into a
// temporary package directory, its policy's clock pinned as a staged
// example's is (e2eharness.StageExample). With fn set, the package also
// gets a kustomization that runs the policy as an exec function of that
// binary.
func expandPackage(t *testing.T, name, fn string) string {
	t.Helper()
	dir := t.TempDir()
	defer e2eharness.PinClock(t, dir, e2eharness.StagedNow)
	files, err := filepath.Glob(filepath.Join("testdata", name, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/%s/*.yaml: %v", name, err)
	}
	var resources []string
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := testpki.ExpandTemplate(f, string(text))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), out, 0o644); err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) != "rotation-policy.yaml" {
			resources = append(resources, filepath.Base(f))
		}
	}
	if fn == "" {
		return dir
	}
	policy := filepath.Join(dir, "rotation-policy.yaml")
	node, err := yaml.ReadFile(policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.PipeE(yaml.SetAnnotation("config.kubernetes.io/function", "exec:\n  path: "+fn+"\n")); err != nil {
		t.Fatal(err)
	}
	if err := yaml.WriteFile(node, policy); err != nil {
		t.Fatal(err)
	}
	kustomization := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " +
		strings.Join(resources, "\n- ") + "\ntransformers:\n- rotation-policy.yaml\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
