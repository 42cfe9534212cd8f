package trustbundle_test

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const tmBundle = "  - name: corp\n    target: {kind: Bundle, name: corp, trustNamespace: trust}\n"

func trustManagerBundle(seen string, sources ...string) string {
	doc := "apiVersion: trust.cert-manager.io/v1alpha1\nkind: Bundle\nmetadata:\n  name: corp\n"
	if seen != "" {
		doc += "  annotations:\n    rotate-certs.dev/seen: |\n      " + indent(6, seen) + "\n"
	}
	doc += "spec:\n  sources:\n"
	for _, s := range sources {
		doc += "  - " + s + "\n"
	}
	return doc + "  target: {configMap: {key: ca.crt}}\n"
}

func inLine(text string) string { return "inLine: |\n      " + indent(6, text) }

// inLines returns the inLine sources of the Bundle in items.
func inLines(t *testing.T, items []*yaml.RNode) []string {
	t.Helper()
	for _, it := range items {
		if it.GetKind() != "Bundle" {
			continue
		}
		seq, err := it.Pipe(yaml.Lookup("spec", "sources"))
		require.NoError(t, err)
		var out []string
		for _, e := range seq.YNode().Content {
			if v, _ := yaml.NewRNode(e).Pipe(yaml.Lookup("inLine")); v != nil {
				out = append(out, v.YNode().Value)
			}
		}
		return out
	}
	t.Fatal("no Bundle")
	return nil
}

func TestTrustManagerInLineLifecycle(t *testing.T) {
	roots := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: roots, namespace: trust}\ndata:\n  a.pem: |\n    " + indent(4, pemOf(caNew)) + "\n  b.pem: |\n    " + indent(4, pemOf(signerA)) + "\n  note: not a certificate\n"
	pinned := inLine("# our partner\n" + pemOf(caNext))
	first := render(t, tmBundle, parseItems(t, roots,
		trustManagerBundle(pemOf(caOld, signerA), "configMap: {name: roots, includeAllKeys: true}", pinned)))
	require.Empty(t, first.matching("error"))
	got := inLines(t, first.items)
	require.Len(t, got, 2, "the user's inLine and rotate-certs' own")
	require.Equal(t, "# our partner\n"+pemOf(caNext), got[0], "the user's source is never edited")
	require.True(t, strings.HasPrefix(got[1], "# managed-by: rotate-certs.dev/bundle=corp\n"))
	d, err := pki.DecodePEM([]byte(got[1]))
	require.NoError(t, err)
	require.Len(t, d.Certificates, 1)
	require.Equal(t, "old", d.Certificates[0].Subject.CommonName, "the CA that left the sources is carried")
	seen := first.items[1].GetAnnotations()["rotate-certs.dev/seen"]
	require.Equal(t, pemOf(caNext, caNew, signerA), seen, "seen is what every visible source holds now, canonical")

	// The policy retires the old CA: the inLine source goes, the user's
	// stays.
	later := render(t, strings.Replace(tmBundle, "trust}\n", "trust}\n    retain: {maxPrevious: 0}\n", 1), first.again(t))
	got = inLines(t, later.items)
	require.Equal(t, []string{"# our partner\n" + pemOf(caNext)}, got)
}

func TestTrustManagerInLineOwners(t *testing.T) {
	src := "apiVersion: v1\nkind: Secret\nmetadata: {name: root, namespace: trust}\ndata:\n  ca.crt: " + b64(caNew) + "\n"
	for _, tt := range []struct{ marker, want string }{
		{"# managed-by: rotate-certs.dev/bundle=renamed", `is managed by rotate-certs bundle "renamed", not this one`},
		{"#managed-by:   history-keeper  ", `is managed by "history-keeper", another tool`},
	} {
		r := render(t, tmBundle, parseItems(t, src,
			trustManagerBundle("", "secret: {name: root, key: ca.crt}", inLine(tt.marker+"\n"+pemOf(caOld)))))
		require.Len(t, r.matching(tt.want), 1, "%s", tt.marker)
	}
	// A comment that names no owner is the user's own inLine source.
	r := render(t, tmBundle, parseItems(t, src,
		trustManagerBundle("", "secret: {name: root, key: ca.crt}", inLine("# managed by hand\n"+pemOf(caOld)))))
	require.Empty(t, r.matching("error"))
	require.Len(t, inLines(t, r.items), 1, "nothing to carry: every CA is in a source")
}

// TestTrustManagerReadsSnapshots: the Secret the Bundle reads lives in the
// cluster; its snapshot stands in for it.
func TestTrustManagerReadsSnapshots(t *testing.T) {
	snap := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: root\n  namespace: trust\n  annotations: {config.kubernetes.io/local-config: \"true\"}\ndata:\n  ca.crt: " + b64(caNew) + "\n"
	items := parseItems(t, snap, trustManagerBundle(pemOf(caOld), "secret: {name: root, key: ca.crt}"))
	r := render(t, tmBundle, items)
	require.Empty(t, r.matching("error"))
	require.Len(t, inLines(t, r.items), 1)
}

func TestClusterTrustBundleSignerNameIsImmutable(t *testing.T) {
	ctb := "apiVersion: certificates.k8s.io/v1beta1\nkind: ClusterTrustBundle\nmetadata: {name: \"example.com:gw:v1\"}\nspec:\n  signerName: example.com/other\n  trustBundle: |\n    " + indent(4, pemOf(caOld)) + "\n"
	r := render(t, "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {kind: ClusterTrustBundle, name: \"example.com:gw:v1\", signerName: example.com/gw}\n",
		parseItems(t, sourceSecret(caNew), ctb))
	require.Len(t, r.matching(`has spec.signerName "example.com/other" but the policy's target.signerName is "example.com/gw"`), 1)
}
