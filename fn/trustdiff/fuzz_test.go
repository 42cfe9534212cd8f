package trustdiff

import (
	"bytes"
	"encoding/base64"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

var fuzzNow = testpki.GoldenNow

// model parses manifests into a Model; nil when they do not parse.
func model(text string) *Model {
	items, err := (&kio.ByteReader{Reader: strings.NewReader(text), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil
	}
	return Build(Input{Items: items})
}

// outputs are every format of r.
func outputs(t *testing.T, r Result) [][]byte {
	j, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{j, []byte(Table(r, false)), []byte(Markdown(r, MarkdownOptions{}))}
}

// keySeed is a manifest holding a key beside its CA.
func keySeed(ca, leaf testpki.Cert, extra ...testpki.Cert) string {
	bundle := string(ca.PEM())
	for _, c := range extra {
		bundle += string(c.PEM())
	}
	enc := base64.StdEncoding.EncodeToString
	return "apiVersion: v1\nkind: Secret\nmetadata: {name: ca, namespace: a}\ndata:\n  ca.crt: " + enc([]byte(bundle)) +
		"\n  tls.crt: " + enc(leaf.PEM()) + "\n  tls.key: " + enc(ca.KeyPEM()) +
		"\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w, namespace: a}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n        - secretRef: {name: ca}\n"
}

// embeddedSeed holds ca in the values objects embed (embedded.go): a
// workload's env, a HelmRelease's values beside a key, an Argo CD cluster
// Secret's config beside its keyData.
func embeddedSeed(ca, leaf testpki.Cert) string {
	pemLines := strings.ReplaceAll(strings.TrimSpace(string(ca.PEM())), "\n", "\n          ")
	keyLines := strings.ReplaceAll(strings.TrimSpace(string(leaf.KeyPEM())), "\n", "\n          ")
	enc := base64.StdEncoding.EncodeToString
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w, namespace: a}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        env:\n        - name: TRUST_ANCHORS\n          value: " + enc(ca.PEM()) +
		"\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: h, namespace: a}\nspec:\n  values:\n    tls:\n      ca: |\n          " + pemLines + "\n      key: |\n          " + keyLines +
		"\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: c, namespace: a}\nstringData:\n  config: '{\"tlsClientConfig\": {\"caData\": \"" + enc(ca.PEM()) + "\", \"certData\": \"" + enc(leaf.PEM()) + "\", \"keyData\": \"" + enc(leaf.KeyPEM()) + "\"}}'\n"
}

// bundleSeed is a trust-manager Bundle reading root's Secret and pinning
// CA pinned inLine, a workload reading the Bundle's ConfigMap, and a
// client's chain: a leaf of an issuer of the old gateway CA, then the
// issuer.
func bundleSeed(root, pinned testpki.Cert) string {
	enc := base64.StdEncoding.EncodeToString
	issuer := testpki.NewIntermediate("fuzz-issuer", "fuzz-issuing", testpki.Fixture("ca-2025"), testpki.Date(2026, 1, 1), testpki.Days(900))
	chain := append(testpki.NewLeaf("fuzz-leaf", issuer, testpki.Date(2026, 10, 1), testpki.Days(90)).PEM(), issuer.PEM()...)
	return "apiVersion: trust.cert-manager.io/v1alpha1\nkind: Bundle\nmetadata: {name: corp}\nspec:\n  sources:\n  - secret: {name: root, key: ca.crt}\n" +
		"  - inLine: " + strconv.Quote(string(pinned.PEM())) + "\n  target:\n    configMap: {key: ca.pem}\n" +
		"---\napiVersion: v1\nkind: Secret\nmetadata: {name: root, namespace: cert-manager}\ndata:\n  ca.crt: " + enc(root.PEM()) +
		"\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: client, namespace: a}\ndata:\n  tls.crt: " + enc(chain) +
		"\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w, namespace: a}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        envFrom:\n        - configMapRef: {name: corp}\n"
}

// FuzzCompare is diff's model - Build, Compare and the formats - over two
// trees of manifests: no panic; no key echoed; diff A A is empty; the CAs
// diff A B adds are the ones diff B A removes. FuzzDiff (fn/diff) runs the
// whole command, kustomize builds included, over two directories.
func FuzzCompare(f *testing.F) {
	caOld, caNew := testpki.Fixture("ca-2025"), testpki.Fixture("ca-2026")
	f.Add(keySeed(caOld, testpki.Fixture("leaf-old")), keySeed(caNew, testpki.Fixture("leaf-new"), caOld))
	f.Add(keySeed(caOld, testpki.Fixture("leaf-old")), "")
	f.Add(embeddedSeed(caOld, testpki.Fixture("leaf-old")), embeddedSeed(caNew, testpki.Fixture("leaf-new")))
	// a key where no key belongs, and an alias that names a node holding it
	f.Add(keySeed(caOld, testpki.Fixture("leaf-old")), keySeed(caOld, testpki.Fixture("leaf-old"))+
		"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\ndata:\n  k: |\n"+indent(string(caOld.KeyPEM()))+
		"---\napiVersion: example.com/v1\nkind: W\nmetadata: {name: w}\nspec: &a {k: [*a, *a]}\n")
	// a trust-manager Bundle whose source Secret's root is replaced, and
	// a chain (a leaf, then its issuer) in one value
	f.Add(bundleSeed(caOld, testpki.Fixture("ca-2027")), bundleSeed(caNew, testpki.Fixture("ca-2027")))
	f.Fuzz(func(t *testing.T, a, b string) {
		ta, tb := model(a), model(b)
		if ta == nil || tb == nil {
			return
		}
		if r := Compare(ta, model(a), fuzzNow); !r.Empty() {
			t.Fatalf("diff A A is not empty: %+v", r)
		}
		ab, ba := Compare(ta, tb, fuzzNow), Compare(tb, ta, fuzzNow)
		samePairwise(t, ta, tb)
		samePairwise(t, tb, ta)
		if got, want := caSet(ab, true), caSet(ba, false); got != want {
			t.Fatalf("added %q, reverse removed %q", got, want)
		}
		for _, out := range append(outputs(t, ab), outputs(t, ba)...) {
			if bytes.Contains(out, []byte("PRIVATE KEY")) || bytes.Contains(out, []byte("BEGIN")) {
				t.Fatalf("output holds PEM: %s", out)
			}
		}
	})
}

// indent indents each line of s by four spaces.
func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}

// caSet is the sorted set of (object, CA) added (or removed) in r.
func caSet(r Result, added bool) string {
	var out []string
	for _, t := range r.Trust {
		cas := t.Removed
		if added {
			cas = t.Added
		}
		for _, c := range cas {
			out = append(out, t.Resource.id()+" "+t.Field+" "+c.SHA256)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func TestNoKeyMaterialInAnyFormat(t *testing.T) {
	caOld, caNew := testpki.Fixture("ca-2025"), testpki.Fixture("ca-2026")
	base, head := model(keySeed(caOld, testpki.Fixture("leaf-old"))), model(keySeed(caNew, testpki.Fixture("leaf-new")))
	r := Compare(base, head, fuzzNow)
	if r.Summary.Added == 0 || r.Summary.Removed == 0 {
		t.Fatalf("want a change, got %+v", r.Summary)
	}
	key := string(caNew.KeyPEM())
	body := strings.Join(strings.Split(strings.TrimSpace(key), "\n")[1:2], "")
	for _, out := range outputs(t, r) {
		if strings.Contains(string(out), body) || strings.Contains(string(out), base64.StdEncoding.EncodeToString([]byte(key))[:40]) {
			t.Fatalf("output holds the key: %s", out)
		}
	}
}

func TestMarkdownIsCutAndSaysSo(t *testing.T) {
	r := Result{SchemaVersion: schemaVersion}
	for i := 0; i < 3000; i++ {
		r.Rolls = append(r.Rolls, Roll{Resource: Resource{Kind: "Deployment", Namespace: "ns", Name: strings.Repeat("w", 40) + strconv.Itoa(i)}, Wave: WaveNow})
	}
	r.Summary.Rolls = len(r.Rolls)
	md := Markdown(r, MarkdownOptions{Command: "rotate-certs diff main HEAD"})
	if len(md) > maxMarkdown {
		t.Fatalf("%d characters, over %d", len(md), maxMarkdown)
	}
	if !strings.Contains(md, "of 3000 object(s) in Rolls") || !strings.Contains(md, "rotate-certs diff main HEAD") {
		t.Fatalf("the cut comment does not say what it left out and how to see it:\n%s", md[len(md)-400:])
	}
	if !strings.HasPrefix(md, "### rotate-certs diff: PASS") {
		t.Errorf("verdict not first: %.80s", md)
	}
}

// breaksPairwise is breaks as it ran before certificates were judged per
// class of trust object: every rule on every candidate key. The class
// walk must find exactly its breaks, in its order.
func breaksPairwise(base, head *Model, now time.Time) []Break {
	k := newBreaker(base, head, now)
	for _, c := range head.certs {
		for _, key := range k.chainable(k.issued(c)...) {
			k.lost(c, key)
			k.newAgainstOld(c, key)
		}
	}
	for _, c := range base.certs {
		for _, key := range k.chainable(c.cert) {
			k.oldAgainstNew(c, key)
		}
	}
	return k.out
}

// samePairwise fails t when breaks and breaksPairwise disagree on base
// and head.
func samePairwise(t *testing.T, base, head *Model) {
	t.Helper()
	got, want := breaks(base, head, fuzzNow), breaksPairwise(base, head, fuzzNow)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("breaks by class of trust object:\n%+v\nbreaks key by key:\n%+v", got, want)
	}
}

// fleet is clusters copies of the cluster whose manifests cluster(i)
// returns, each under clusters/c<i>/ (path annotations, as the readers
// give them).
func fleet(clusters int, cluster func(i int) string) string {
	var docs []string
	for i := range clusters {
		file := "clusters/c" + strconv.Itoa(i) + "/trust.yaml"
		docs = append(docs, strings.ReplaceAll(cluster(i), "namespace: a}",
			"namespace: a, annotations: {internal.config.kubernetes.io/path: '"+file+"'}}"))
	}
	return strings.Join(docs, "\n---\n")
}

// A fleet of copies is judged per class of trust object, and the breaks
// are the ones every rule on every copy finds: none when nothing changes,
// one cluster's when its CA is replaced in place, every cluster's when
// all are.
func TestFleetBreaksByClassAreBreaksKeyByKey(t *testing.T) {
	caOld, caNew := testpki.Fixture("ca-2025"), testpki.Fixture("ca-2026")
	leafOld, leafNew := testpki.Fixture("leaf-old"), testpki.Fixture("leaf-new")
	old := func(int) string { return keySeed(caOld, leafOld) }
	for _, tc := range []struct {
		name     string
		head     func(i int) string
		breakage bool
	}{
		{"nothing changes", old, false},
		{"one cluster's CA replaced in place", func(i int) string {
			if i == 2 {
				return keySeed(caNew, leafNew)
			}
			return keySeed(caOld, leafOld)
		}, true},
		{"every cluster's CA replaced in place", func(int) string { return keySeed(caNew, leafNew) }, true},
		{"every cluster rendered with both CAs", func(int) string { return keySeed(caNew, leafNew, caOld) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := model(fleet(5, old)), model(fleet(5, tc.head))
			if base == nil || head == nil {
				t.Fatal("fleet does not parse")
			}
			samePairwise(t, base, head)
			samePairwise(t, head, base)
			if got := len(breaks(base, head, fuzzNow)) > 0; got != tc.breakage {
				t.Errorf("breaks found: %t, want %t", got, tc.breakage)
			}
		})
	}
}
