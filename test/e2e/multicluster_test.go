package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
)

// rootsKey is the trust roots every Linkerd proxy trusts.
var rootsKey = kube.Key{Kind: "ConfigMap", Namespace: "linkerd", Name: "linkerd-identity-trust-roots"}

// anchorsIn returns the subjects of the anchors cluster c of the staged
// multicluster example trusts.
func anchorsIn(t *testing.T, dir, c string) []string {
	t.Helper()
	items := parseStream(t, readFile(t, filepath.Join(dir, "clusters", c, "identity-trust-roots.yaml")))
	return bundleSubjects(t, items, rootsKey, "ca-bundle.crt")
}

// TestMulticlusterExample walks examples/multicluster as its README does,
// with the built binary, in a git work tree: the old anchor stays in both
// clusters while west's issuer needs it, a render of east alone warns and
// keeps it, and it leaves both clusters at one render a day after west's
// issuer is re-issued.
func TestMulticlusterExample(t *testing.T) {
	dir := stageExample(t, "multicluster")
	gitInit(t, dir, nil)
	render := func(sub, now string) string {
		_, stderr, code := runIn(t, filepath.Join(dir, sub), "", "render", ".", "--now", now)
		require.Zero(t, code, stderr)
		return stderr
	}
	both := []string{"root.linkerd.cluster.local", "root.linkerd.cluster.local"}
	one := []string{"root.linkerd.cluster.local"}
	reissue := func(c string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "clusters", c, "identity-issuer.yaml"), []byte(readFile(t, filepath.Join(dir, "next", c, "identity-issuer.yaml"))), 0o644))
	}
	steps := []struct {
		name, sub, now string
		before         func()
		east, west     []string
		warns          bool
	}{
		{"the new anchor is committed", ".", "2027-01-04", nil, both, both, false},
		{"east is re-issued: west still needs the old anchor", ".", "2027-01-06", func() { reissue("east") }, both, both, false},
		{"east alone does not see west", "clusters/east", "2027-01-07", nil, both, both, true},
		{"west is re-issued", ".", "2027-01-08", func() { reissue("west") }, nil, nil, false},
		{"a day later both drop the old anchor", ".", "2027-01-09T12:00:00Z", nil, one, one, false},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		stderr := render(s.sub, s.now)
		require.Equal(t, s.warns, strings.Contains(stderr, `trust domain "mesh-anchors", which this run does not see whole`), "%s: %s", s.name, stderr)
		if s.east != nil {
			require.Equal(t, s.east, anchorsIn(t, dir, "east"), s.name)
			require.Equal(t, s.west, anchorsIn(t, dir, "west"), s.name)
		}
	}
}

// TestMulticlusterKustomizeSeesPart: kustomize builds one cluster of the
// example: the function warns on stderr, naming the domain.
func TestMulticlusterKustomizeSeesPart(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	dir := stageExample(t, "multicluster")
	gitInit(t, dir, nil)
	out, stderr := kustomizeBuild(t, kustomize, filepath.Join(dir, "clusters", "east"))
	require.Contains(t, stderr, `trust domain "mesh-anchors"`)
	require.Equal(t, []string{"root.linkerd.cluster.local", "root.linkerd.cluster.local"}, bundleSubjects(t, parseStream(t, out), rootsKey, "ca-bundle.crt"))
}
