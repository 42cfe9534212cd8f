package trustbundle_test

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
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

// inLineCerts returns the common names of the certificates of an inLine
// source.
func inLineCerts(t *testing.T, text string) []string {
	t.Helper()
	d, err := pki.DecodePEM([]byte(text))
	require.NoError(t, err)
	var out []string
	for _, c := range d.Certificates {
		out = append(out, c.Subject.CommonName)
	}
	return out
}

// TestTrustManagerInLineLifecycle: rotate-certs' inLine source pins what
// the sources hold, so that a CA which leaves them is already in the
// Bundle's data and is carried as previous; the policy's retain rules drop
// it later; the user's inLine source is never edited.
func TestTrustManagerInLineLifecycle(t *testing.T) {
	roots := func(ca testpki.Cert) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: roots, namespace: trust}\ndata:\n  a.pem: |\n    " + indent(4, pemOf(ca)) + "\n  b.pem: |\n    " + indent(4, pemOf(signerA)) + "\n  note: not a certificate\n"
	}
	pinned := inLine("# our partner\n" + pemOf(caNext))
	first := render(t, tmBundle, parseItems(t, roots(caOld),
		trustManagerBundle("", "configMap: {name: roots, includeAllKeys: true}", pinned)))
	require.Empty(t, first.errors())
	got := inLines(t, first.items)
	require.Len(t, got, 2, "the user's inLine and rotate-certs' own")
	require.Equal(t, "# our partner\n"+pemOf(caNext), got[0], "the user's source is never edited")
	require.True(t, strings.HasPrefix(got[1], "# managed-by: rotate-certs.dev/bundle=corp\n"))
	require.Equal(t, []string{"next", "signer-a", "old"}, inLineCerts(t, got[1]), "the pin: what the sources hold now, canonical")
	require.Len(t, first.matching("has no inLine source of rotate-certs yet"), 1)
	seen := first.items[1].GetAnnotations()["rotate-certs.dev/seen"]
	require.Equal(t, pemOf(caNext, signerA, caOld), seen, "seen is what every visible source holds now, canonical")
	require.False(t, first.rendered[0].Targets[0].TrustChanged, "the pin holds what trust-manager already distributes: no reader's trust changed")

	// The source rotates: the old CA is in the pin, so it is carried.
	items := first.again(t)
	items[0] = parseItems(t, roots(caNew))[0]
	rotated := render(t, tmBundle, items)
	for _, res := range rotated.results {
		require.Equal(t, framework.Info, res.Severity, res.Message)
	}
	require.Equal(t, []string{"next", "new", "signer-a", "old"}, inLineCerts(t, inLines(t, rotated.items)[1]), "the CA that left the sources is carried")
	require.True(t, rotated.rendered[0].Targets[0].TrustChanged, "the readers held the pin; now they also hold the new CA")

	// The policy retires the old CA: the pin stays, without it.
	later := render(t, strings.Replace(tmBundle, "trust}\n", "trust}\n    retain: {maxPrevious: 0}\n", 1), rotated.again(t))
	got = inLines(t, later.items)
	require.Len(t, got, 2)
	require.Equal(t, "# our partner\n"+pemOf(caNext), got[0])
	require.Equal(t, []string{"next", "new", "signer-a"}, inLineCerts(t, got[1]))
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
	// A comment that names no owner is the user's own inLine source: its
	// CA is current, and rotate-certs' own source pins it.
	r := render(t, tmBundle, parseItems(t, src,
		trustManagerBundle("", "secret: {name: root, key: ca.crt}", inLine("# managed by hand\n"+pemOf(caOld)))))
	require.Empty(t, r.errors())
	got := inLines(t, r.items)
	require.Len(t, got, 2)
	require.Equal(t, "# managed by hand\n"+pemOf(caOld), got[0])
	require.Equal(t, []string{"new", "old"}, inLineCerts(t, got[1]))
}

// TestTrustManagerReadsSnapshots: the Secret the Bundle reads lives in the
// cluster; its snapshot stands in for it.
func TestTrustManagerReadsSnapshots(t *testing.T) {
	snap := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: root\n  namespace: trust\n  annotations: {config.kubernetes.io/local-config: \"true\"}\ndata:\n  ca.crt: " + b64(caNew) + "\n"
	items := parseItems(t, snap, trustManagerBundle("", "secret: {name: root, key: ca.crt}"))
	r := render(t, tmBundle, items)
	require.Empty(t, r.errors())
	got := inLines(t, r.items)
	require.Len(t, got, 1)
	require.Equal(t, []string{"new"}, inLineCerts(t, got[0]))
}

// TestTrustManagerSeenNeverAddsACA: a CA that only the seen annotation
// names (no source, not in rotate-certs' inLine source) is not trusted:
// a warning names the annotation, the Bundle and the CA.
func TestTrustManagerSeenNeverAddsACA(t *testing.T) {
	src := "apiVersion: v1\nkind: Secret\nmetadata: {name: root, namespace: trust}\ndata:\n  ca.crt: " + b64(caNew) + "\n"
	own := inLine("# managed-by: rotate-certs.dev/bundle=corp\n" + pemOf(caNew))
	r := render(t, tmBundle, parseItems(t, src, trustManagerBundle(pemOf(caNew, caOld), "secret: {name: root, key: ca.crt}", own)))
	require.Empty(t, r.errors())
	warned := r.matching(`annotation rotate-certs.dev/seen names CA "CN=old,O=rotate-certs test" sha256:` + pki.FingerprintOf(caOld.Cert).String())
	require.Len(t, warned, 1)
	require.Equal(t, framework.Warning, warned[0].Severity)
	require.Contains(t, warned[0].Message, "Bundle corp")
	got := inLines(t, r.items)
	require.Equal(t, []string{"new"}, inLineCerts(t, got[len(got)-1]), "the forged CA is not in the Bundle's data")
	require.Equal(t, pemOf(caNew), r.items[1].GetAnnotations()["rotate-certs.dev/seen"], "and is dropped from the annotation")
}

func TestClusterTrustBundleSignerNameIsImmutable(t *testing.T) {
	ctb := "apiVersion: certificates.k8s.io/v1beta1\nkind: ClusterTrustBundle\nmetadata: {name: \"example.com:gw:v1\"}\nspec:\n  signerName: example.com/other\n  trustBundle: |\n    " + indent(4, pemOf(caOld)) + "\n"
	r := render(t, "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {kind: ClusterTrustBundle, name: \"example.com:gw:v1\", signerName: example.com/gw}\n",
		parseItems(t, sourceSecret(caNew), ctb))
	require.Len(t, r.matching(`has spec.signerName "example.com/other" but the policy's target.signerName is "example.com/gw"`), 1)
}

// TestTrustManagerSelectorSelects: a Bundle source that selects by label
// reads exactly the objects of the trust namespace its selector matches,
// as trust-manager does - never an object the selector leaves out, which
// would pin that object's CA as trusted. Each ConfigMap holds one CA under
// the source's key.
func TestTrustManagerSelectorSelects(t *testing.T) {
	cm := func(name, labels string, ca testpki.Cert) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: trust, labels: {" + labels + "}}\ndata:\n  ca.crt: |\n    " + indent(4, pemOf(ca)) + "\n"
	}
	objects := []string{
		cm("current", "root: \"true\", stage: current", caNew),
		cm("previous", "root: \"true\"", caOld),
		cm("retired", "root: \"true\", stage: retired", caNext),
		cm("unrelated", "team: payments", signerA),
	}
	for _, tc := range []struct {
		name, selector string
		want           []string
	}{
		{"matchLabels", `{matchLabels: {root: "true"}}`, []string{"next", "new", "old"}},
		{"NotIn", `{matchLabels: {root: "true"}, matchExpressions: [{key: stage, operator: NotIn, values: [retired]}]}`, []string{"new", "old"}},
		{"In", `{matchExpressions: [{key: stage, operator: In, values: [current, retired]}]}`, []string{"next", "new"}},
		{"Exists", `{matchExpressions: [{key: team, operator: Exists}]}`, []string{"signer-a"}},
		{"DoesNotExist", `{matchExpressions: [{key: stage, operator: DoesNotExist}]}`, []string{"signer-a", "old"}},
		{"empty selects every object, as the API server's", `{}`, []string{"next", "new", "signer-a", "old"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := parseItems(t, append(objects, trustManagerBundle("", "configMap: {selector: "+tc.selector+", key: ca.crt}"))...)
			r := render(t, tmBundle, items)
			require.Empty(t, r.errors())
			got := inLines(t, r.items)
			require.Len(t, got, 1)
			require.Equal(t, tc.want, inLineCerts(t, got[0]))
		})
	}
}

// TestTrustManagerRefusesWhatTrustManagerRefuses: a configMap or secret
// source that trust-manager's webhook or controller refuses (key and
// includeAllKeys together or neither, includeAllKeys on a TLS Secret, a
// value that holds more than CERTIFICATE blocks) is an error naming the
// field, never read: rotate-certs would pin CAs that trust-manager never
// distributes (with key and includeAllKeys both set it reads key alone).
func TestTrustManagerRefusesWhatTrustManagerRefuses(t *testing.T) {
	objects := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: roots, namespace: trust}\ndata:\n  ca.crt: |\n    " + indent(4, pemOf(caNew)) + "\n  other.pem: |\n    " + indent(4, pemOf(caOld)) + "\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: serving, namespace: trust}\ntype: kubernetes.io/tls\nstringData:\n  ca.crt: |\n    " + indent(4, pemOf(caNew)) + "\n  tls.crt: |\n    " + indent(4, pemOf(caNew)) + "\n  tls.key: \"\"\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mixed, namespace: trust}\ndata:\n  ca.crt: |\n    " + indent(4, pemOf(caNew)+"-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n") + "\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: headers, namespace: trust}\ndata:\n  ca.crt: |\n    " + indent(4, strings.Replace(pemOf(caNew), "-----\n", "-----\nProc-Type: 4,ENCRYPTED\n\n", 1)) + "\n",
	}
	for _, tc := range []struct{ name, source, field string }{
		{"key and includeAllKeys", "configMap: {name: roots, key: ca.crt, includeAllKeys: true}", "spec.sources[0].configMap.includeAllKeys"},
		{"neither key nor includeAllKeys", "configMap: {name: roots}", "spec.sources[0].configMap.key"},
		{"includeAllKeys false and no key", "configMap: {name: roots, includeAllKeys: false}", "spec.sources[0].configMap.key"},
		{"name and selector", "configMap: {name: roots, selector: {matchLabels: {a: b}}, key: ca.crt}", "spec.sources[0].configMap.selector"},
		{"includeAllKeys on a TLS Secret", "secret: {name: serving, includeAllKeys: true}", "spec.sources[0].secret.includeAllKeys"},
		{"a private key beside the CA", "configMap: {name: mixed, key: ca.crt}", "data.ca.crt"},
		{"a PEM header", "configMap: {name: headers, key: ca.crt}", "data.ca.crt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := parseItems(t, append(objects, trustManagerBundle("", tc.source))...)
			r := render(t, tmBundle, items)
			var fields []string
			for _, res := range r.results {
				if res.Severity == framework.Error && res.Field != nil {
					fields = append(fields, res.Field.Path)
				}
			}
			require.Equal(t, []string{tc.field}, fields, "%v", r.results)
			require.Empty(t, r.rendered[0].Targets)
		})
	}
}

// TestTrustManagerBooleanSpellings: includeAllKeys is a boolean, and
// kubectl, Argo CD and Flux read manifests as YAML 1.1 (sigs.k8s.io/yaml),
// where True, yes and on are true; a quoted "true" is a string the API
// server refuses for it.
func TestTrustManagerBooleanSpellings(t *testing.T) {
	roots := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: roots, namespace: trust}\ndata:\n  a.pem: |\n    " + indent(4, pemOf(caNew)) + "\n  b.pem: |\n    " + indent(4, pemOf(caOld)) + "\n"
	for _, tc := range []struct {
		spelling string
		all      bool
	}{{"true", true}, {"True", true}, {"TRUE", true}, {"yes", true}, {"on", true}, {"\"true\"", false}, {"false", false}, {"no", false}} {
		t.Run(tc.spelling, func(t *testing.T) {
			r := render(t, tmBundle, parseItems(t, roots, trustManagerBundle("", "configMap: {name: roots, includeAllKeys: "+tc.spelling+"}")))
			if !tc.all {
				require.NotEmpty(t, r.rendered[0].Results, "no key and includeAllKeys not true")
				require.Empty(t, r.rendered[0].Targets)
				return
			}
			got := inLines(t, r.items)
			require.Len(t, got, 1, "%v", r.results)
			require.Equal(t, []string{"new", "old"}, inLineCerts(t, got[0]))
		})
	}
}

// TestTrustManagerSourceWithoutCertificate: a source value that holds no
// certificate is an error (its CAs could not be carried), stricter than
// trust-manager, which adds nothing for it; the message says so and does
// not claim trust-manager refuses it. A private key beside a CA is what
// trust-manager refuses, and that message says so.
func TestTrustManagerSourceWithoutCertificate(t *testing.T) {
	for _, tc := range []struct{ name, value, want, not string }{
		{"no PEM", "not a certificate", "rotate-certs cannot carry CAs it cannot read", "trust-manager refuses"},
		{"a private key", "-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----", "trust-manager refuses such a source too", "cannot carry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: roots, namespace: trust}\ndata:\n  ca.crt: |\n    " + indent(4, tc.value) + "\n"
			r := render(t, tmBundle, parseItems(t, cm, trustManagerBundle("", "configMap: {name: roots, key: ca.crt}")))
			errs := r.errors()
			require.Len(t, errs, 1, "%v", r.results)
			require.Contains(t, errs[0].Message, tc.want)
			require.NotContains(t, errs[0].Message, tc.not)
		})
	}
}
