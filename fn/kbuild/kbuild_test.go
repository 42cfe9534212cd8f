package kbuild

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// disk is Files over the disk, as resio's is.
type disk struct{}

func (disk) ReadDir(dir string) ([]fs.DirEntry, error) { return os.ReadDir(dir) }
func (disk) Stat(p string) (fs.FileInfo, error)        { return os.Stat(p) }
func (disk) ReadFile(p string) ([]byte, error)         { return os.ReadFile(p) }

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

// istioPlugin is the plug-in CA layout as Istio's tools/certs Makefile
// writes it (a cluster's directory with ca-cert.pem, ca-key.pem,
// root-cert.pem, cert-chain.pem), fed to a secretGenerator.
func istioPlugin() map[string]string {
	ca := testpki.NewIntermediate("kbuild-cluster1", "cluster1 CA", root, testpki.Date(2026, 1, 1), testpki.Days(730))
	return map[string]string{
		"kustomization.yaml": `namespace: istio-system
secretGenerator:
- name: cacerts
  files:
  - cluster1/ca-cert.pem
  - cluster1/ca-key.pem
  - cluster1/root-cert.pem
  - cluster1/cert-chain.pem
  options:
    disableNameSuffixHash: true
resources:
- istiod.yaml
`,
		"istiod.yaml":              "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: istiod\n",
		"cluster1/ca-cert.pem":     string(ca.PEM()),
		"cluster1/ca-key.pem":      string(ca.KeyPEM()),
		"cluster1/root-cert.pem":   string(root.PEM()),
		"cluster1/cert-chain.pem":  string(ca.PEM()) + string(root.PEM()),
	}
}

// TestBuildPluginCA: the generator's Secret is built from the PEM files,
// in the kustomization's namespace, traced to the kustomization, and the
// build read every input.
func TestBuildPluginCA(t *testing.T) {
	dir := tree(t, istioPlugin())
	b := Run(disk{}, dir)
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
	b := Run(disk{}, dir)
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
