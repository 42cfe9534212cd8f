package e2e

import (
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kbuild"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/rotate-certs/rotate-certs/internal/testpki/layouts"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// pluginCAFleet is Istio's plug-in CA (the files its tools/certs Makefile
// writes, fed to a secretGenerator: internal/testpki/layouts) as a fleet
// repository: a base with istiod and a
// generator with a hashed name, a component, and two clusters whose
// overlays set the namespace, patch (strategic merge and JSON 6902), add
// literals and env files, and generate cacerts from their own PEM files.
func pluginCAFleet(t *testing.T) string {
	root := testpki.NewCA("e2e-kbuild-root", testpki.Date(2026, 1, 1), testpki.Days(3650))
	dir := t.TempDir()
	files := map[string]string{
		"base/kustomization.yaml": "resources:\n- istiod.yaml\nconfigMapGenerator:\n- name: mesh\n  literals:\n  - trustDomain=cluster.local\n",
		"base/istiod.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: istiod\nspec:\n  selector:\n    matchLabels: {app: istiod}\n  template:\n" +
			"    metadata:\n      labels: {app: istiod}\n    spec:\n      containers:\n      - name: discovery\n        image: istio/pilot:1\n" +
			"        volumeMounts:\n        - {name: cacerts, mountPath: /etc/cacerts}\n        - {name: mesh, mountPath: /etc/mesh}\n" +
			"      volumes:\n      - name: cacerts\n        secret: {secretName: cacerts, optional: true}\n      - name: mesh\n        configMap: {name: mesh}\n",
		"components/debug/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nlabels:\n- pairs: {debug: \"on\"}\n",
	}
	for _, cluster := range []string{"east", "west"} {
		ca := testpki.NewIntermediate("e2e-kbuild-"+cluster, cluster+" CA", root, testpki.Date(2026, 1, 1), testpki.Days(730))
		files["clusters/"+cluster+"/kustomization.yaml"] = "namespace: istio-system\nresources:\n- ../../base\ncomponents:\n- ../../components/debug\n" +
			"patches:\n- path: replicas.yaml\n- target: {kind: Deployment, name: istiod}\n  path: image.json\n" +
			"secretGenerator:\n" + layouts.CACertsGenerator("certs") + "- name: extra\n  envs:\n  - extra.env\n  literals:\n  - cluster=" + cluster + "\n"
		files["clusters/"+cluster+"/replicas.yaml"] = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: istiod\nspec:\n  replicas: 2\n"
		files["clusters/"+cluster+"/image.json"] = `[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "istio/pilot:2"}]`
		files["clusters/"+cluster+"/extra.env"] = "A=1\nB=2\n"
		maps.Copy(files, layouts.PluginCA{Intermediate: ca, Root: root}.Files("clusters/"+cluster+"/certs"))
	}
	writeFiles(t, dir, files)
	return dir
}

// TestInProcessBuildAgreesWithKustomize: the build diff and check read a
// kustomization through (package kbuild, kustomize's API in-process) gives
// the objects `kustomize build` prints - names with their hashes,
// namespaces, patches, generators, components - on the plug-in CA fleet
// and on every example that builds offline, but for what the build keeps
// on purpose: the objects marked local-config (kustomize drops them once
// its transformers ran; the policy reads them) and its own annotations.
func TestInProcessBuildAgreesWithKustomize(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	fleet := pluginCAFleet(t)
	dirs := []string{filepath.Join(fleet, "clusters", "east"), filepath.Join(fleet, "clusters", "west")}
	examples := withoutTransformers(t)
	for _, pattern := range []string{"*/kustomization.yaml", "*/*/*/kustomization.yaml"} {
		found, err := filepath.Glob(filepath.Join(examples, pattern))
		require.NoError(t, err)
		for _, k := range found {
			dirs = append(dirs, filepath.Dir(k))
		}
	}
	built := 0
	for _, dir := range dirs {
		t.Run(filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir), func(t *testing.T) {
			b := kbuild.Run(kbuild.Disk{}, dir)
			require.NoError(t, b.Err)
			if b.NotBuilt != "" {
				require.Contains(t, b.NotBuilt, "not built", "named, never skipped in silence")
				return
			}
			out, stderr, err := run(t, dir, kustomize, "build", ".")
			require.NoError(t, err, stderr)
			require.Equal(t, objects(t, parseStream(t, out)), objects(t, b.Items))
			built++
		})
	}
	require.GreaterOrEqual(t, built, 10, "the fleet's clusters and the examples are compared")
}

// withoutTransformers copies examples/ with the transformers: entries of
// its kustomizations left out: the policy they list is an exec function the
// kustomize binary refuses without --enable-alpha-plugins, and the
// in-process build does not run (it reads the policy as an object).
func withoutTransformers(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := golden.Path("examples")
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if d.Name() == "kustomization.yaml" {
			data = []byte(strings.Split(string(data), "transformers:")[0])
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	}))
	return dst
}

// objects are items as YAML, sorted, without local-config objects and
// rotate-certs' annotations.
func objects(t *testing.T, items []*yaml.RNode) []string {
	t.Helper()
	var out []string
	for _, it := range items {
		if it.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
			continue
		}
		c := it.Copy()
		for _, k := range []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation, kbuild.OriginAnnotation, kbuild.NameAnnotation} {
			require.NoError(t, c.PipeE(yaml.ClearAnnotation(k)))
		}
		if len(c.GetAnnotations()) == 0 {
			_ = c.PipeE(yaml.Lookup("metadata"), yaml.Clear("annotations"))
		}
		m, err := c.Map()
		require.NoError(t, err)
		s, err := json.Marshal(m) // keys sorted: kustomize prints them sorted
		require.NoError(t, err)
		out = append(out, string(s))
	}
	slices.Sort(out)
	return out
}
