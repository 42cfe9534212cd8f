package trustbundle_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The certificates of these tests, made at test time around now.
var (
	now     = testpki.Date(2026, 11, 22)
	caOld   = testpki.NewCA("old", testpki.Date(2025, 6, 1), testpki.Days(730))
	caNew   = testpki.NewCA("new", testpki.Date(2026, 11, 1), testpki.Days(730))
	caNext  = testpki.NewCA("next", testpki.Date(2026, 12, 1), testpki.Days(730))
	caGone  = testpki.NewCA("gone", testpki.Date(2024, 1, 1), testpki.Days(366))
	signerA = testpki.NewCA("signer-a", testpki.Date(2026, 9, 1), testpki.Days(365))
)

func pemOf(certs ...testpki.Cert) string {
	var b strings.Builder
	for _, c := range certs {
		b.Write(c.PEM())
	}
	return b.String()
}

func b64(certs ...testpki.Cert) string {
	return base64.StdEncoding.EncodeToString([]byte(pemOf(certs...)))
}

// indent indents every line of s but the first by n spaces, for block
// scalars.
func indent(n int, s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+strings.Repeat(" ", n))
}

// run is one render of a policy over items, as the function runs it:
// every bundle, then Finish.
type run struct {
	items    []*yaml.RNode
	rendered []trustbundle.Rendered
	results  framework.Results
}

func render(t *testing.T, bundles string, items []*yaml.RNode) run {
	t.Helper()
	node, err := yaml.Parse("apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata: {name: p}\nspec:\n  trustBundles:\n" + bundles)
	require.NoError(t, err)
	pol, err := policy.Decode(node)
	require.NoError(t, err)
	index := kube.NewIndex(items)
	env := trustbundle.Env{Index: index, Now: now, Snapshots: trustbundle.NewSnapshots(items), PolicyRef: kube.Ref{APIVersion: policy.APIVersion, Kind: policy.Kind, Name: "p"}}
	r := run{items: items}
	for i := range pol.Spec.TrustBundles {
		out := trustbundle.Render(&pol.Spec.TrustBundles[i], fmt.Sprintf("spec.trustBundles[%d]", i), env)
		r.results = append(r.results, out.Results...)
		for _, tg := range out.Targets {
			if tg.Created {
				r.items = append(r.items, tg.Node)
			}
		}
		r.rendered = append(r.rendered, out)
	}
	r.results = append(r.results, trustbundle.Finish(r.rendered, r.items, nil, index)...)
	return r
}

func parseItems(t *testing.T, docs ...string) []*yaml.RNode {
	t.Helper()
	out := make([]*yaml.RNode, len(docs))
	for i, d := range docs {
		n, err := yaml.Parse(d)
		require.NoError(t, err)
		out[i] = n
	}
	return out
}

// again re-parses the output items: the next render's input.
func (r run) again(t *testing.T) []*yaml.RNode {
	t.Helper()
	docs := make([]string, len(r.items))
	for i, it := range r.items {
		docs[i] = it.MustString()
	}
	return parseItems(t, docs...)
}

func (r run) text() []string {
	out := make([]string, len(r.items))
	for i, it := range r.items {
		out[i] = it.MustString()
	}
	return out
}

func (r run) target(t *testing.T, bundle, ns string) trustbundle.Target {
	t.Helper()
	for _, b := range r.rendered {
		if b.Name != bundle {
			continue
		}
		for _, tg := range b.Targets {
			if tg.Key.Namespace == ns {
				return tg
			}
		}
	}
	t.Fatalf("no target of bundle %q in %q", bundle, ns)
	return trustbundle.Target{}
}

// matching returns the results whose message contains substr.
func (r run) matching(substr string) framework.Results {
	var out framework.Results
	for _, res := range r.results {
		if strings.Contains(res.Message, substr) {
			out = append(out, res)
		}
	}
	return out
}

// oneWarning requires one warning about substr at field whose message
// holds each of words when want is true, and none about substr otherwise.
// It returns want.
func (r run) oneWarning(t *testing.T, substr string, want bool, field string, words ...string) bool {
	t.Helper()
	warns := r.matching(substr)
	if !want {
		require.Empty(t, warns)
		return false
	}
	require.Len(t, warns, 1)
	require.Equal(t, framework.Warning, warns[0].Severity)
	require.Equal(t, field, warns[0].Field.Path)
	for _, w := range words {
		require.Contains(t, warns[0].Message, w)
	}
	return true
}

// errors returns the results of severity error (a message need not say
// "error").
func (r run) errors() framework.Results {
	var out framework.Results
	for _, res := range r.results {
		if res.Severity == framework.Error {
			out = append(out, res)
		}
	}
	return out
}

func sourceSecret(certs ...testpki.Cert) string {
	return "apiVersion: v1\nkind: Secret\nmetadata: {name: src, namespace: gw}\ndata:\n  ca.crt: " + b64(certs...) + "\n"
}

const gwBundle = "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {name: trust}\n"

func TestTrustChangedComparesCertificateSets(t *testing.T) {
	canonical := pemOf(caNew, caOld) // newest NotBefore first
	tests := []struct {
		name         string
		target       string // the trust object, "" for none
		changed      bool
		trustChanged bool
	}{
		{"created", "", true, true},
		{"same set, canonical, annotated: nothing to do",
			"apiVersion: v1\nkind: Secret\nmetadata:\n  name: trust\n  namespace: gw\n  annotations:\n    rotate-certs.dev/bundle-hash: '" + hashOf(canonical) + "'\n    rotate-certs.dev/rotated-at: '2026-11-01T00:00:00Z'\n" +
				"    rotate-certs.dev/retired: |\n      " + pki.FingerprintOf(caOld.Cert).String() + " 2026-11-01T00:00:00Z\ndata:\n  ca.crt: " + b64(caNew, caOld) + "\n",
			false, false},
		{"same set, adopted without annotations", "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata:\n  ca.crt: " + b64(caNew, caOld) + "\n", true, false},
		{"same set in another order", "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata:\n  ca.crt: " + b64(caOld, caNew) + "\n", true, false},
		{"same set with CRLF line ends", "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata:\n  ca.crt: " +
			base64.StdEncoding.EncodeToString([]byte(strings.ReplaceAll(pemOf(caOld, caNew), "\n", "\r\n"))) + "\n", true, false},
		{"same set with text around and a repeat", "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\nstringData:\n  ca.crt: |\n    the old CA:\n    " +
			indent(4, pemOf(caOld)) + "\n    and the new one, twice:\n    " + indent(4, pemOf(caNew, caNew)) + "\n", true, false},
		{"a CA is added", "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata:\n  ca.crt: " + b64(caOld) + "\n", true, true},
		{"a CA is dropped", "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata:\n  ca.crt: " + b64(caNew, caOld, signerA) + "\n", true, true},
		{"the key is missing", "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata: {}\n", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := []string{sourceSecret(caNew)}
			if tt.target != "" {
				docs = append(docs, tt.target)
			}
			// maxPrevious 1 keeps caOld; signerA (a second previous) goes.
			r := render(t, gwBundle, parseItems(t, docs...))
			require.Zero(t, r.results.ExitCode(), "%v", r.results)
			tg := r.target(t, "gw", "gw")
			require.Equal(t, tt.changed, tg.Changed, "Changed")
			require.Equal(t, tt.trustChanged, tg.TrustChanged, "TrustChanged")
			v, found, err := kube.Lookup(tg.Node, "ca.crt")
			require.NoError(t, err)
			require.True(t, found)
			if !tt.trustChanged || tt.name == "a CA is added" {
				require.Equal(t, canonical, string(v.Bytes), "the same set renders to the same bytes")
			}
			require.Equal(t, hashOf(string(v.Bytes)), tg.Hash)

			// The next render changes nothing and says so.
			r2 := render(t, gwBundle, r.again(t))
			require.Equal(t, r.text(), r2.text())
			tg2 := r2.target(t, "gw", "gw")
			require.False(t, tg2.Changed)
			require.False(t, tg2.TrustChanged)
			require.Len(t, r2.matching("; unchanged"), 1)
		})
	}
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestSharedObjectAnnotations(t *testing.T) {
	const twoBundles = "  - name: a\n    sources: [{secret: {name: src-a, namespace: gw}}]\n    target: {name: trust, key: a.crt}\n" +
		"  - name: b\n    sources: [{secret: {name: src-b, namespace: gw}}]\n    target: {name: trust, key: b.crt}\n"
	// The same bundles listed the other way round.
	const swapped = "  - name: b\n    sources: [{secret: {name: src-b, namespace: gw}}]\n    target: {name: trust, key: b.crt}\n" +
		"  - name: a\n    sources: [{secret: {name: src-a, namespace: gw}}]\n    target: {name: trust, key: a.crt}\n"
	src := func(name string, c testpki.Cert) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: gw}\ndata:\n  ca.crt: " + b64(c) + "\n"
	}
	trust := "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata:\n  a.crt: " + b64(caOld) + "\n  b.crt: " + b64(signerA) + "\n"
	items := func() []*yaml.RNode {
		return parseItems(t, src("src-a", caNew), src("src-b", signerA), trust)
	}

	r := render(t, twoBundles, items())
	require.Zero(t, r.results.ExitCode(), "%v", r.results)
	a, b := r.target(t, "a", "gw"), r.target(t, "b", "gw")
	require.Same(t, a.Node, b.Node)
	require.Equal(t, hashOf(pemOf(caNew, caOld)), a.Hash, "a target's Hash is its own bundle's")
	require.Equal(t, hashOf(pemOf(signerA)), b.Hash)
	want := hashOf("a.crt " + a.Hash + "\nb.crt " + b.Hash + "\n")
	annos := a.Node.GetAnnotations()
	require.Equal(t, want, annos[trustbundle.HashAnnotation], "bundle-hash covers every key, sorted by key")
	require.Equal(t, "2026-11-01T00:00:00Z", annos[trustbundle.RotatedAtAnnotation], "rotated-at is the latest of the bundles'")
	require.True(t, a.Changed, "a rotated")
	require.False(t, b.Changed, "b's key did not change")
	require.True(t, a.TrustChanged)
	require.False(t, b.TrustChanged)

	// Listing the bundles the other way round writes the same object.
	rs := render(t, swapped, items())
	require.Equal(t, r.text(), rs.text())

	// Re-rendered, both bundles report unchanged and the bytes stay.
	r2 := render(t, twoBundles, r.again(t))
	require.Equal(t, r.text(), r2.text())
	require.False(t, r2.target(t, "a", "gw").Changed)
	require.False(t, r2.target(t, "b", "gw").Changed)
	require.Len(t, r2.matching("; unchanged"), 2)

	// b rotates later to a newer signer: the object's annotations follow
	// b alone, and a stays unchanged.
	signerA2 := testpki.NewCA("signer-a-2", testpki.Date(2026, 11, 15), testpki.Days(365))
	next := r.again(t)
	next[1] = parseItems(t, src("src-b", signerA2))[0]
	r3 := render(t, twoBundles, next)
	a3, b3 := r3.target(t, "a", "gw"), r3.target(t, "b", "gw")
	require.False(t, a3.Changed)
	require.True(t, b3.Changed)
	annos = a3.Node.GetAnnotations()
	require.Equal(t, hashOf("a.crt "+a3.Hash+"\nb.crt "+b3.Hash+"\n"), annos[trustbundle.HashAnnotation])
	require.NotEqual(t, want, annos[trustbundle.HashAnnotation])
	require.Equal(t, "2026-11-15T00:00:00Z", annos[trustbundle.RotatedAtAnnotation])
}

func TestDuplicateTargetIsAnError(t *testing.T) {
	copyIn := func(path string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: trust\n  namespace: gw\n  annotations:\n    internal.config.kubernetes.io/path: " + path +
			"\n    internal.config.kubernetes.io/index: '1'\ndata:\n  ca.crt: " + b64(caOld) + "\n"
	}
	tests := []struct {
		name  string
		items []string
		want  []string // in the error message; none means no error
	}{
		{"two files", []string{sourceSecret(caNew), copyIn("a/trust.yaml"), copyIn("b/trust.yaml")}, []string{"appears 2 times", "a/trust.yaml (index 1)", "b/trust.yaml (index 1)"}},
		{"no paths: item positions", []string{sourceSecret(caNew),
			"apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\n",
			"apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\n"}, []string{"items[1], items[2]"}},
		{"a duplicate that is not a target is not this check's business", []string{sourceSecret(caNew), copyIn("a/trust.yaml"),
			"apiVersion: v1\nkind: Secret\nmetadata: {name: other, namespace: gw}\n", "apiVersion: v1\nkind: Secret\nmetadata: {name: other, namespace: gw}\n"}, nil},
		{"a local-config copy does not count", []string{sourceSecret(caNew), copyIn("a/trust.yaml"),
			"apiVersion: v1\nkind: Secret\nmetadata:\n  name: trust\n  namespace: gw\n  annotations: {config.kubernetes.io/local-config: 'true'}\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, gwBundle, parseItems(t, tt.items...))
			errs := r.matching("appears")
			if tt.want == nil {
				require.Empty(t, errs)
				require.Zero(t, r.results.ExitCode())
				return
			}
			require.Len(t, errs, 1)
			require.Equal(t, framework.Error, errs[0].Severity)
			require.Equal(t, "data.ca.crt", errs[0].Field.Path)
			require.Equal(t, "trust", errs[0].ResourceRef.Name)
			for _, w := range tt.want {
				require.Contains(t, errs[0].Message, w)
			}
		})
	}
}

func TestSharedKeyThroughSelectorIsAnError(t *testing.T) {
	bundles := "  - name: a\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {name: trust, namespaces: [apps]}\n" +
		"  - name: b\n    sources:\n    - inline: |\n        " + indent(8, pemOf(signerA)) + "\n    target: {name: trust, namespaces: [other], namespaceSelector: {matchLabels: {trust: b}}}\n"
	r := render(t, bundles, parseItems(t, sourceSecret(caNew), "apiVersion: v1\nkind: Namespace\nmetadata: {name: apps, labels: {trust: b}}\n"))
	errs := r.matching("both write key ca.crt")
	require.Len(t, errs, 1, "%v", r.results)
	require.Contains(t, errs[0].Message, `bundles "a" and "b"`)
	require.Equal(t, "apps", errs[0].ResourceRef.Namespace)
}

func TestImmutableTargetWarns(t *testing.T) {
	target := func(immutable string, certs ...testpki.Cert) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\n" + immutable + "data:\n  ca.crt: " + b64(certs...) + "\n"
	}
	tests := []struct {
		name   string
		target string
		warn   bool
	}{
		{"immutable and the data changes", target("immutable: true\n", caOld), true},
		{"immutable and only the annotations are added", target("immutable: true\n", caNew, caOld), false},
		{"immutable: True, as kubectl reads YAML", target("immutable: True\n", caOld), true},
		{"immutable: yes, as kubectl reads YAML", target("immutable: yes\n", caOld), true},
		{"immutable: false", target("immutable: false\n", caOld), false},
		{"mutable", target("", caOld), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, gwBundle, parseItems(t, sourceSecret(caNew), tt.target))
			if !r.oneWarning(t, "is immutable", tt.warn, "immutable", "Secret gw/trust", "deleted and re-created") {
				return
			}
			// Re-rendered, nothing changes and nothing is said.
			r2 := render(t, gwBundle, r.again(t))
			require.Empty(t, r2.matching("is immutable"))
		})
	}
}

func TestNoValidCertificateWarns(t *testing.T) {
	tests := []struct {
		name    string
		bundles string
		items   []string
		warn    bool
	}{
		{"copy mode with only a next CA", "  - name: gw\n    mode: Copy\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {name: trust}\n",
			[]string{sourceSecret(caNext), "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata:\n  ca.crt: " + b64(caNew) + "\n"}, true},
		{"a created target with only a next CA", gwBundle, []string{sourceSecret(caNext)}, true},
		{"bundle mode keeps the valid previous CA", gwBundle,
			[]string{sourceSecret(caNext), "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata:\n  ca.crt: " + b64(caNew) + "\n"}, false},
		{"a next CA beside a valid one", gwBundle, []string{sourceSecret(caNext, caNew)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, tt.bundles, parseItems(t, tt.items...))
			require.Zero(t, r.results.ExitCode(), "pre-distribution is allowed: %v", r.results)
			warns := r.matching("no certificate in the bundle is valid now")
			if !tt.warn {
				require.Empty(t, warns)
				return
			}
			require.Len(t, warns, 1)
			require.Equal(t, framework.Warning, warns[0].Severity)
			require.Contains(t, warns[0].Message, "2026-12-01T00:00:00Z", "says when it becomes valid")
			require.Equal(t, "data.ca.crt", warns[0].Field.Path)
		})
	}
}

func TestExpiredSourceReportedOnceAtItsSource(t *testing.T) {
	fanout := func(source string) string {
		return "  - name: gw\n    sources: [" + source + "]\n    target: {name: trust, namespaces: [a, b, c]}\n"
	}
	tests := []struct {
		name    string
		bundles string
		items   []string
		kind    string
		field   string
	}{
		{"stringData source", fanout("{secret: {name: src, namespace: gw}}"),
			[]string{"apiVersion: v1\nkind: Secret\nmetadata: {name: src, namespace: gw}\nstringData:\n  ca.crt: |\n    " + indent(4, pemOf(caNew, caGone)) + "\n"},
			"Secret", "stringData.ca.crt"},
		{"configMap binaryData source", fanout("{configMap: {name: src, namespace: gw}}"),
			[]string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: src, namespace: gw}\nbinaryData:\n  ca-bundle.crt: " + b64(caGone, caNew) + "\n"},
			"ConfigMap", "binaryData.ca-bundle.crt"},
		{"inline source, also repeated in a second source",
			"  - name: gw\n    sources:\n    - inline: |\n        " + indent(8, pemOf(caGone, caNew)) + "\n    - secret: {name: src, namespace: gw}\n    target: {name: trust, namespaces: [a, b, c]}\n",
			[]string{sourceSecret(caGone)},
			policy.Kind, "spec.trustBundles[0].sources[0].inline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, tt.bundles, parseItems(t, tt.items...))
			require.Zero(t, r.results.ExitCode(), "%v", r.results)
			require.Len(t, r.rendered[0].Targets, 3)
			warns := r.matching("has expired and is not trusted")
			require.Len(t, warns, 1, "once per bundle, not per target")
			require.Equal(t, tt.kind, warns[0].ResourceRef.Kind)
			require.Equal(t, tt.field, warns[0].Field.Path)
			require.Contains(t, warns[0].Message, pki.FingerprintOf(caGone.Cert).Short())
		})
	}
}

func TestExistingTargetWithoutStateWarns(t *testing.T) {
	tests := []struct {
		name   string
		target string
		warn   bool
		field  string
	}{
		{"data: {}", "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata: {}\n", true, "data.ca.crt"},
		{"other keys only", "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata: {README: eA==}\n", true, "data.ca.crt"},
		{"an empty stringData value", "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\nstringData: {ca.crt: ''}\n", true, "stringData.ca.crt"},
		{"a bundle", "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: gw}\ndata: {ca.crt: " + b64(caOld) + "}\n", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, gwBundle, parseItems(t, sourceSecret(caNew), tt.target))
			warns := r.matching("there was no previous state to carry over")
			if !tt.warn {
				require.Empty(t, warns)
				return
			}
			require.Len(t, warns, 1)
			require.Equal(t, framework.Warning, warns[0].Severity)
			require.Equal(t, tt.field, warns[0].Field.Path)
			require.Contains(t, warns[0].Message, "Secret gw/trust held no certificate")
		})
	}
}

func TestConfigMapBinaryDataTarget(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: trust, namespace: gw}\nbinaryData:\n  ca-bundle.crt: " + b64(caOld) + "\n  logo.png: AAE=\n"
	bundles := "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {kind: ConfigMap, name: trust}\n"
	r := render(t, bundles, parseItems(t, sourceSecret(caNew), cm))
	require.Zero(t, r.results.ExitCode(), "%v", r.results)
	tg := r.target(t, "gw", "gw")
	require.Len(t, r.matching("moved ca-bundle.crt from binaryData to data"), 1)
	values, err := kube.Values(tg.Node)
	require.NoError(t, err)
	fields := map[string]string{}
	for _, v := range values {
		fields[v.Key] = v.Field
	}
	require.Equal(t, map[string]string{"ca-bundle.crt": "data.ca-bundle.crt", "logo.png": "binaryData.logo.png"}, fields,
		"the key lives in data only; the other binary key stays")
	v, _, err := kube.Lookup(tg.Node, "ca-bundle.crt")
	require.NoError(t, err)
	require.Equal(t, pemOf(caNew, caOld), string(v.Bytes), "what binaryData held carried over as previous")

	r2 := render(t, bundles, r.again(t))
	require.Equal(t, r.text(), r2.text())
	require.False(t, r2.target(t, "gw", "gw").Changed)
	require.Empty(t, r2.matching("moved"))

	// The same set moved out of binaryData is a rewrite, not a trust change.
	same := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: trust, namespace: gw}\nbinaryData:\n  ca-bundle.crt: " + b64(caNew, caOld) + "\n"
	r3 := render(t, bundles, parseItems(t, sourceSecret(caNew), same))
	tg3 := r3.target(t, "gw", "gw")
	require.True(t, tg3.Changed)
	require.False(t, tg3.TrustChanged)
	require.Nil(t, tg3.Node.Field("binaryData"), "an emptied binaryData is removed")
}

// The clock matters to the tests above only through now; this guards the
// fixtures' layout against edits.
func TestFixtureLayout(t *testing.T) {
	require.True(t, caNext.Cert.NotBefore.After(now))
	require.True(t, caGone.Cert.NotAfter.Before(now))
	require.True(t, caNew.Cert.NotBefore.Before(now) && caOld.Cert.NotAfter.After(now.Add(30*24*time.Hour)))
}

// TestNamespaceSelectorSeesTheNameLabel: a target's namespaceSelector sees
// the name label the API server sets on every Namespace
// (kubernetes.io/metadata.name) beside the manifest's labels, so that a
// selection by name writes the target into the Namespaces it names - and
// not into one it excludes by name.
func TestNamespaceSelectorSeesTheNameLabel(t *testing.T) {
	for _, tc := range []struct {
		name, selector string
		want           []string
	}{
		{"NotIn", "{matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}]}", []string{"apps", "billing"}},
		{"In", "{matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [billing]}]}", []string{"billing"}},
		{"matchLabels with another label", "{matchLabels: {kubernetes.io/metadata.name: apps, team: web}}", []string{"apps"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bundles := "  - name: a\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {name: trust, namespaces: [], namespaceSelector: " + tc.selector + "}\n"
			items := parseItems(t, sourceSecret(caNew),
				"apiVersion: v1\nkind: Namespace\nmetadata: {name: apps, labels: {team: web}}\n",
				"apiVersion: v1\nkind: Namespace\nmetadata: {name: billing}\n",
				"apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-system}\n")
			r := render(t, bundles, items)
			require.Empty(t, r.errors(), "%v", r.results)
			var got []string
			for _, tg := range r.rendered[0].Targets {
				got = append(got, tg.Key.Namespace)
			}
			require.ElementsMatch(t, tc.want, got)
		})
	}
}

// A target value that holds a private key, or a kubernetes.io/tls Secret's
// own tls.crt and tls.key, is never overwritten: the key would be lost (a
// target that points at Istio's cacerts ca-key.pem, or Linkerd's issuer
// key.pem), or a server would present a CA bundle with its own key. Every
// other key, and the type, stays byte for byte.
func TestTargetNeverOverwritesAKeyOrAServingCertificate(t *testing.T) {
	key := string(caOld.KeyPEM())
	keyB64 := base64.StdEncoding.EncodeToString(caOld.KeyPEM())
	target := func(name, key string) string {
		return "  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {name: " + name + ", key: " + key + "}\n"
	}
	tests := []struct {
		name, bundle, object string
		field                string // the field of the error, "" for none
	}{
		{"Istio's cacerts, ca-key.pem in stringData", target("cacerts", "ca-key.pem"),
			"apiVersion: v1\nkind: Secret\nmetadata: {name: cacerts, namespace: gw}\nstringData:\n  ca-key.pem: |\n    " + indent(4, key) + "\n  root-cert.pem: |\n    " + indent(4, pemOf(caOld)) + "\n",
			"stringData.ca-key.pem"},
		{"Linkerd's issuer, key.pem in data", target("linkerd-identity-issuer", "key.pem"),
			"apiVersion: v1\nkind: Secret\nmetadata: {name: linkerd-identity-issuer, namespace: gw}\ndata:\n  crt.pem: " + b64(caOld) + "\n  key.pem: " + keyB64 + "\n",
			"data.key.pem"},
		{"a certificate and its key in one value", target("combined", "server.pem"),
			"apiVersion: v1\nkind: Secret\nmetadata: {name: combined, namespace: gw}\ndata:\n  server.pem: " + base64.StdEncoding.EncodeToString([]byte(pemOf(caOld)+key)) + "\n",
			"data.server.pem"},
		{"a TLS Secret's tls.crt", target("serving", "tls.crt"),
			"apiVersion: v1\nkind: Secret\nmetadata: {name: serving, namespace: gw}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: " + b64(caOld) + "\n  tls.key: " + keyB64 + "\n",
			"data.tls.crt"},
		{"a TLS Secret's tls.key, absent", target("serving", "tls.key"),
			"apiVersion: v1\nkind: Secret\nmetadata: {name: serving, namespace: gw}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: " + b64(caOld) + "\n",
			"data.tls.key"},
		{"a TLS Secret's ca.crt is a target like any", target("serving", "ca.crt"),
			"apiVersion: v1\nkind: Secret\nmetadata: {name: serving, namespace: gw}\ntype: kubernetes.io/tls\ndata:\n  tls.crt: " + b64(caOld) + "\n  tls.key: " + keyB64 + "\n  ca.crt: " + b64(caOld) + "\n",
			""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, tt.bundle, parseItems(t, sourceSecret(caNew), tt.object))
			out := r.text()[1]
			if tt.field == "" {
				require.Empty(t, r.errors())
				require.Contains(t, out, "type: kubernetes.io/tls\n")
				require.Contains(t, out, "  tls.crt: "+b64(caOld)+"\n  tls.key: "+keyB64+"\n")
				require.Contains(t, out, "  ca.crt: "+b64(caNew, caOld)+"\n")
				return
			}
			errs := r.errors()
			require.Len(t, errs, 1)
			require.Equal(t, tt.field, errs[0].Field.Path)
			require.Contains(t, errs[0].Message, "never")
			require.NotContains(t, errs[0].Message, "PRIVATE KEY-----")
			require.Equal(t, tt.object, out, "the target is left as it was")
		})
	}
}

// istiod writes ConfigMap istio-ca-root-cert into every namespace from its
// CA's roots and overwrites any other value of root-cert.pem: a bundle
// rendered into it is undone at once, and the sync tool and istiod fight
// over it. The render says so, once per bundle, and names cacerts.
func TestTargetIstiodOwnsIsAWarning(t *testing.T) {
	tests := []struct {
		name, bundle string
		warn         bool
	}{
		{"istio-ca-root-cert", "  - name: mesh\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {kind: ConfigMap, name: istio-ca-root-cert, namespaces: [shop, catalog], key: root-cert.pem}\n", true},
		{"cacerts", "  - name: mesh\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {kind: Secret, name: cacerts, namespaces: [istio-system], key: root-cert.pem}\n", false},
		{"a Secret of that name is not istiod's", "  - name: mesh\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {kind: Secret, name: istio-ca-root-cert, namespaces: [shop]}\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, tt.bundle, parseItems(t, sourceSecret(caNew)))
			r.oneWarning(t, "istiod", tt.warn, "spec.trustBundles[0].target.name", "overwrites", "cacerts")
		})
	}
}
