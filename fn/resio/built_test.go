package resio

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kbuild"
	"github.com/stretchr/testify/require"
)

// builtTree is a repository of overlays over one base, a component, a
// generator fed PEM and .env files (the inputs a git revision reads only
// when the build asks), a plain directory, a Component nobody includes,
// a kustomization that needs the network and certificate files no build
// reads.
func builtTree() map[string]string {
	cm := func(name string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n" }
	return map[string]string{
		"base/kustomization.yaml":           "resources:\n- app.yaml\n",
		"base/app.yaml":                     cm("app"),
		"base/stray.yaml":                   cm("stray-in-base"),
		"comp/kustomization.yaml":           "kind: Component\napiVersion: kustomize.config.k8s.io/v1alpha1\ncommonLabels:\n  c: \"1\"\n",
		"lonely/kustomization.yaml":         "kind: Component\napiVersion: kustomize.config.k8s.io/v1alpha1\n",
		"clusters/prod/kustomization.yaml":  "namespace: prod\nresources:\n- ../../base\ncomponents:\n- ../../comp\nsecretGenerator:\n- name: cacerts\n  files:\n  - certs/root-cert.pem\n  envs:\n  - extra.env\n  options:\n    disableNameSuffixHash: true\n",
		"clusters/prod/certs/root-cert.pem": "-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n",
		"clusters/prod/certs/root-key.pem":  "not read by the build\n",
		"clusters/prod/extra.env":           "A=1\n",
		"clusters/dev/kustomization.yaml":   "namePrefix: dev-\nresources:\n- ../../base\n",
		"plain/p.yaml":                      cm("plain"),
		"plain/ca.crt":                      "plain cert\n",
		"net/kustomization.yaml":            "resources:\n- https://example.com/x.yaml\npatches:\n- path: p.yaml\n",
		"net/p.yaml":                        cm("x"),
	}
}

// builtSummary is what ReadBuilt gave, with every path below root.
func builtSummary(t *testing.T, root string, set *Resources) (readSummary, []string, []Built) {
	t.Helper()
	s := summarize(t, root, set)
	strip := func(p string) string { return strings.TrimPrefix(filepath.ToSlash(p), filepath.ToSlash(root)+"/") }
	for i, it := range set.Items {
		s.Items[i] += "origin: " + strip(it.GetAnnotations()[kbuild.OriginAnnotation])
	}
	for i := range s.Notes {
		s.Notes[i] = strings.ReplaceAll(s.Notes[i], root+"/", "")
	}
	var certs []string
	for _, c := range set.CertFiles {
		certs = append(certs, strip(c.Path)+" "+c.SHA256[:8])
	}
	var builds []Built
	for _, b := range set.Builds {
		var read []string
		for _, r := range b.Read {
			read = append(read, strip(r))
		}
		builds = append(builds, Built{File: strip(b.File), Read: read})
	}
	return s, certs, builds
}

// TestReadBuilt: the top-most kustomizations are built, what they reach
// is not read again, the rest is read as plain files, certificate files
// no build reads are listed, and a git revision reads the same as the
// directory checked out - the generator's inputs included.
func TestReadBuilt(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, top := committed(t, builtTree())

	s, certs, builds := builtSummary(t, top, ReadBuilt([]string{top}, nil))
	var got []string
	for _, it := range s.Items {
		head, _, _ := strings.Cut(it, "\n")
		name := it[strings.Index(it, "  name: ")+len("  name: "):]
		name, _, _ = strings.Cut(name, "\n")
		got = append(got, head+" "+name+" "+it[strings.LastIndex(it, "origin: "):])
	}
	require.Equal(t, []string{
		"clusters/dev/kustomization.yaml dev-app origin: base/app.yaml",
		"clusters/prod/kustomization.yaml app origin: base/app.yaml",
		"clusters/prod/kustomization.yaml cacerts origin: clusters/prod/kustomization.yaml",
		"net/p.yaml x origin: ",
		"plain/p.yaml plain origin: ",
	}, got, "base/stray.yaml is in a directory a build reached")
	require.Empty(t, s.Problems)
	require.Equal(t, []string{
		"lonely/kustomization.yaml: a kustomize Component that no kustomization here includes: not read on its own",
	}, filter(s.Notes, "Component"))
	require.Len(t, filter(s.Notes, "net/kustomization.yaml: resources[0] https://example.com/x.yaml: a remote base: not read"), 1, s.Notes)
	require.Len(t, filter(s.Notes, "net/kustomization.yaml: not built"), 1, s.Notes)
	require.Equal(t, []string{"clusters/prod/certs/root-key.pem", "plain/ca.crt"}, prefixes(certs))
	require.Len(t, builds, 2)
	require.Equal(t, "clusters/prod/kustomization.yaml", builds[1].File)
	require.Equal(t, []string{"base/app.yaml", "base/kustomization.yaml", "clusters/prod/certs/root-cert.pem", "clusters/prod/extra.env", "clusters/prod/kustomization.yaml", "comp/kustomization.yaml"}, builds[1].Read)

	rev, err := ReadRevision(dir, "HEAD")
	require.NoError(t, err)
	rs, rcerts, rbuilds := builtSummary(t, top, rev.ReadBuilt([]string{top}))
	require.Equal(t, s, rs)
	require.Equal(t, certs, rcerts)
	require.Equal(t, builds, rbuilds)
}

func filter(lines []string, sub string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

func prefixes(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _, _ = strings.Cut(l, " ")
	}
	return out
}
