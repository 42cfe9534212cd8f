package kbuild

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/rotate-certs/rotate-certs/internal/testpki/layouts"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// tree writes files (path: content) below a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return dir
}

// find returns the built item of kind and name.
func find(t *testing.T, b *Build, kind, name string) *yaml.RNode {
	t.Helper()
	for _, it := range b.Items {
		if it.GetKind() == kind && it.GetName() == name {
			return it
		}
	}
	require.Failf(t, "not built", "%s %s in %v", kind, name, names(b))
	return nil
}

func names(b *Build) []string {
	var out []string
	for _, it := range b.Items {
		out = append(out, it.GetKind()+" "+it.GetNamespace()+"/"+it.GetName())
	}
	return out
}

var root = testpki.NewCA("kbuild-root", testpki.Date(2026, 1, 1), testpki.Days(3650))

// istioPlugin is Istio's plug-in CA fed to a secretGenerator
// (layouts.PluginCA: cluster1's ca-cert.pem, ca-key.pem, root-cert.pem,
// cert-chain.pem), with a ServiceAccount beside it.
func istioPlugin() map[string]string {
	ca := testpki.NewIntermediate("kbuild-cluster1", "cluster1 CA", root, testpki.Date(2026, 1, 1), testpki.Days(730))
	files := layouts.PluginCA{Intermediate: ca, Root: root}.Files("cluster1")
	files["kustomization.yaml"] = layouts.PluginCAKustomization("istiod.yaml")
	files["istiod.yaml"] = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: istiod\n"
	return files
}

// TestBuildPluginCA: the generator's Secret is built from the PEM files,
// in the kustomization's namespace, traced to the kustomization, and the
// build read every input.
func TestBuildPluginCA(t *testing.T) {
	dir := tree(t, istioPlugin())
	b := Run(Disk{}, dir)
	require.NoError(t, b.Err)
	require.Empty(t, b.NotBuilt)
	s := find(t, b, "Secret", "cacerts")
	require.Equal(t, "istio-system", s.GetNamespace())
	k := filepath.Join(dir, "kustomization.yaml")
	a := s.GetAnnotations()
	require.Equal(t, k, a[kioutil.PathAnnotation])
	require.Equal(t, k, a[OriginAnnotation], "a generated object comes from its kustomization")
	require.NotContains(t, a, kustomizeOrigin, "kustomize's own origin annotation is taken off again")
	sa := find(t, b, "ServiceAccount", "istiod")
	require.Equal(t, filepath.Join(dir, "istiod.yaml"), sa.GetAnnotations()[OriginAnnotation])
	require.Equal(t, "istio-system", sa.GetNamespace())
	for _, f := range []string{"kustomization.yaml", "istiod.yaml", "cluster1/ca-cert.pem", "cluster1/ca-key.pem", "cluster1/root-cert.pem", "cluster1/cert-chain.pem"} {
		require.Contains(t, b.Read, filepath.Join(dir, f))
	}
}

// TestBuildHashedName: a generated name keeps kustomize's hash suffix, and
// the name before it is recorded; a name that only looks hashed is not.
func TestBuildHashedName(t *testing.T) {
	dir := tree(t, map[string]string{
		"kustomization.yaml": "configMapGenerator:\n- name: trust\n  literals:\n  - ca.crt=x\nresources:\n- cm.yaml\n",
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: looks-abcdefghkm\n",
	})
	b := Run(Disk{}, dir)
	require.NoError(t, b.Err)
	var gen *yaml.RNode
	for _, it := range b.Items {
		if strings.HasPrefix(it.GetName(), "trust-") {
			gen = it
		}
	}
	require.NotNil(t, gen, names(b))
	require.Len(t, gen.GetName(), len("trust-")+hashLen)
	require.Equal(t, "trust", gen.GetAnnotations()[NameAnnotation])
	require.NotContains(t, find(t, b, "ConfigMap", "looks-abcdefghkm").GetAnnotations(), NameAnnotation)
}

// TestBuildOverlay: an overlay's bases, components, strategic-merge and
// JSON 6902 patches and namespace are built as kustomize builds them, each
// object traced to its own file, and every file read is listed.
func TestBuildOverlay(t *testing.T) {
	dir := tree(t, map[string]string{
		"base/kustomization.yaml":   "resources:\n- deploy.yaml\n- trust.yaml\n",
		"base/deploy.yaml":          "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n",
		"base/trust.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: trust\ndata:\n  ca.crt: old\n",
		"comp/kustomization.yaml":   "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonLabels:\n  team: a\n",
		"prod/kustomization.yaml":   "namespace: prod\nresources:\n- ../base\ncomponents:\n- ../comp\npatches:\n- path: trust-patch.yaml\n- target:\n    kind: Deployment\n    name: app\n  path: image.json\n",
		"prod/trust-patch.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: trust\ndata:\n  ca.crt: new\n",
		"prod/image.json":           `[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "app:2"}]`,
		"prod/unused-not-read.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: unused\n",
	})
	b := Run(Disk{}, filepath.Join(dir, "prod"))
	require.NoError(t, b.Err)
	trust := find(t, b, "ConfigMap", "trust")
	require.Equal(t, "prod", trust.GetNamespace())
	v, err := trust.GetString("data.ca\\.crt")
	if err != nil {
		v = trust.Field("data").Value.Field("ca.crt").Value.YNode().Value
	}
	require.Equal(t, "new", v, "the strategic merge patch applies")
	require.Equal(t, "a", trust.GetLabels()["team"], "the component applies")
	require.Equal(t, filepath.Join(dir, "base/trust.yaml"), trust.GetAnnotations()[OriginAnnotation])
	require.Equal(t, filepath.Join(dir, "prod/kustomization.yaml"), trust.GetAnnotations()[kioutil.PathAnnotation])
	deploy := find(t, b, "Deployment", "app")
	s, err := deploy.String()
	require.NoError(t, err)
	require.Contains(t, s, "image: app:2", "the JSON 6902 patch applies")
	for _, f := range []string{"base/kustomization.yaml", "base/deploy.yaml", "comp/kustomization.yaml", "prod/trust-patch.yaml", "prod/image.json"} {
		require.Contains(t, b.Read, filepath.Join(dir, f))
	}
	require.NotContains(t, b.Read, filepath.Join(dir, "prod/unused-not-read.yaml"))
	require.Equal(t, []string{filepath.Join(dir, "base"), filepath.Join(dir, "comp"), filepath.Join(dir, "prod")}, b.Reached())

	require.True(t, Run(Disk{}, filepath.Join(dir, "comp")).Component, "a Component is not built on its own")
}

// TestBuildOffline: a remote base, a Helm chart and a KRM function are
// left out and named, the rest is built, and nothing is fetched or run;
// rotate-certs' own policy listed as a transformer is an item of the build.
func TestBuildOffline(t *testing.T) {
	dir := tree(t, map[string]string{
		"kustomization.yaml": `resources:
- https://user:token@example.com/install.yaml?ref=secret
- github.com/org/repo//base?ref=v1
- local.yaml
helmCharts:
- name: chart
  repo: https://charts.example.com
transformers:
- policy.yaml
- fn.yaml
- labels.yaml
`,
		"local.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n",
		"policy.yaml": "apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n  name: p\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./rotate-certs\n",
		"fn.yaml":     "apiVersion: fn.example.com/v1\nkind: SetThings\nmetadata:\n  name: f\n  annotations:\n    config.kubernetes.io/function: |\n      container:\n        image: example/fn\n",
		"labels.yaml": "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: l\nlabels:\n  built: \"yes\"\nfieldSpecs:\n- path: metadata/labels\n  create: true\n",
	})
	b := Run(Disk{}, dir)
	require.NoError(t, b.Err)
	require.Empty(t, b.NotBuilt)
	require.Equal(t, "yes", find(t, b, "ConfigMap", "local").GetLabels()["built"], "a builtin transformer runs")
	pol := find(t, b, "RotationPolicy", "p")
	require.Equal(t, filepath.Join(dir, "policy.yaml"), pol.GetAnnotations()[OriginAnnotation])
	require.Equal(t, filepath.Join(dir, "kustomization.yaml"), pol.GetAnnotations()[kioutil.PathAnnotation])
	notes := strings.Join(b.Notes, "\n")
	require.Contains(t, notes, "resources[0] https://example.com/install.yaml: a remote base: not read")
	require.Contains(t, notes, "resources[1] github.com/org/repo//base: a remote base: not read")
	require.Contains(t, notes, "helmCharts: a Helm chart")
	require.Contains(t, notes, "transformers[1] fn.yaml: a KRM function or plugin (fn.example.com/v1 SetThings): not run")
	require.NotContains(t, notes, "token")
	require.NotContains(t, notes, "secret")
	require.Len(t, b.Notes, 4, notes)
}

// TestBuildNotBuilt: a remote file outside resources refuses the build; a
// build that fails once a remote base is left out is not built, naming
// why; a build that fails on its own is an error naming the file.
func TestBuildNotBuilt(t *testing.T) {
	dir := tree(t, map[string]string{
		"remote-patch/kustomization.yaml": "resources:\n- a.yaml\npatches:\n- path: https://example.com/p.yaml\n",
		"remote-patch/a.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"needs-base/kustomization.yaml":   "namespace: argocd\nresources:\n- https://example.com/install.yaml\npatches:\n- path: patch.yaml\n",
		"needs-base/patch.yaml":           "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: argocd-repo-server\nspec:\n  replicas: 2\n",
		"missing/kustomization.yaml":      "resources:\n- gone.yaml\n",
	})
	b := Run(Disk{}, filepath.Join(dir, "remote-patch"))
	require.Contains(t, b.NotBuilt, "patches[0].path names a remote file: not built")
	require.Empty(t, b.Items)
	b = Run(Disk{}, filepath.Join(dir, "needs-base"))
	require.Contains(t, b.NotBuilt, "needs-base/kustomization.yaml: not built: without what it cannot read offline, the build fails")
	b = Run(Disk{}, filepath.Join(dir, "missing"))
	require.Empty(t, b.NotBuilt)
	require.ErrorContains(t, b.Err, "missing/kustomization.yaml: kustomize build fails")
}

// TestIsRemote: kustomize's rules for what it clones or fetches.
func TestIsRemote(t *testing.T) {
	for p, want := range map[string]bool{
		"https://example.com/x.yaml": true, "HTTP://x/y": true, "git::https://x/y": true, "ssh://git@x/y": true,
		"git@github.com:org/repo": true, "github.com/org/repo": true, "file:///tmp/repo": true,
		"../base": false, "base": false, "./github.com.yaml": false, "/abs/path": false, "gitlab.com/org/repo": false,
	} {
		require.Equal(t, want, isRemote(p), p)
	}
}

// TestBuildKeepsLocalConfig: an object marked local-config (a policy's
// source, never applied) is kept, marked as it was; kustomize would drop it
// after its transformers ran.
func TestBuildKeepsLocalConfig(t *testing.T) {
	dir := tree(t, map[string]string{
		"kustomization.yaml": "resources:\n- src.yaml\n- src.json\n",
		"src.yaml":           "apiVersion: v1\nkind: Secret\nmetadata:\n  name: src\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"src.json":           `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j", "annotations": {"config.kubernetes.io/local-config": "true"}}}`,
	})
	b := Run(Disk{}, dir)
	require.NoError(t, b.Err)
	for _, n := range []*yaml.RNode{find(t, b, "Secret", "src"), find(t, b, "ConfigMap", "j")} {
		a := n.GetAnnotations()
		require.Equal(t, "true", a[localConfig])
		require.NotContains(t, a, keptLocal)
	}
}

// TestBuildFailsAlike: a build that fails fails with the same message in
// every run - kustomize prints a generator it cannot merge as the memory
// addresses of its parts, which differed between the two sides of a diff
// of an unchanged kustomization and made it fatal (FuzzDiff).
func TestBuildFailsAlike(t *testing.T) {
	dir := tree(t, map[string]string{
		"app/kustomization.yaml": "secretGenerator:\n- name: ca\n  behavior: merge\n  literals: [ca.crt=x]\n",
	})
	first, second := Run(Disk{}, filepath.Join(dir, "app")), Run(Disk{}, filepath.Join(dir, "app"))
	require.ErrorContains(t, first.Err, "does not exist; cannot merge or replace")
	require.Equal(t, first.Err.Error(), second.Err.Error())
	require.NotContains(t, first.Err.Error(), "0x")
}

// TestBuildErrorShowsNoObject: kustomize's error for two objects that its
// namespace makes one quotes both as JSON, their data included - a key in
// base64 among it (FuzzDiff); the build's error names the kustomization
// and what failed, without the objects.
func TestBuildErrorShowsNoObject(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(root.KeyPEM())
	secret := func(ns string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: ca, namespace: " + ns + "}\ndata:\n  tls.key: " + key + "\n"
	}
	dir := tree(t, map[string]string{
		"app/kustomization.yaml": "namespace: x\nresources: [a.yaml, b.yaml]\n",
		"app/a.yaml":             secret("a"),
		"app/b.yaml":             secret("b"),
	})
	b := Run(Disk{}, filepath.Join(dir, "app"))
	require.ErrorContains(t, b.Err, "app/kustomization.yaml: kustomize build fails: namespace transformation produces ID conflict")
	require.NotContains(t, b.Err.Error(), key[:40])
	require.NotContains(t, b.Err.Error(), `{"`)
}
