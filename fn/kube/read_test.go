package kube

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// aliasValueCases are Secrets and ConfigMaps whose values use YAML
// aliases, merge keys and nulls, with the values and fields they read as.
var aliasValueCases = []struct {
	name   string
	in     string
	want   map[string]string
	fields map[string]string
}{
	{"configmap value alias", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data:
  orig.crt: &pem |
    PEM
  ca-bundle.crt: *pem
`, map[string]string{"orig.crt": "PEM\n", "ca-bundle.crt": "PEM\n"}, map[string]string{"ca-bundle.crt": "data.ca-bundle.crt"}},
	{"secret value alias is base64-decoded", `
apiVersion: v1
kind: Secret
metadata: {name: s}
data:
  a: &v aGVsbG8=
  b: *v
`, map[string]string{"a": "hello", "b": "hello"}, nil},
	{"alias key", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, labels: {k: &k ca.crt}}
data:
  *k : x
`, map[string]string{"ca.crt": "x"}, map[string]string{"ca.crt": "data.ca.crt"}},
	{"whole data field is an alias", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, annotations: {note: x}}
spec: {template: &d {a: one, b: two}}
data: *d
`, map[string]string{"a": "one", "b": "two"}, nil},
	{"merge key: own keys win over merged ones", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
spec: {base: &base {a: base-a, b: base-b}}
data:
  <<: *base
  b: own-b
`, map[string]string{"a": "base-a", "b": "own-b"}, nil},
	{"merge list: the earlier map wins", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
spec:
  one: &one {a: one-a}
  two: &two {a: two-a, c: two-c}
data:
  <<: [*one, *two]
`, map[string]string{"a": "one-a", "c": "two-c"}, nil},
	{"quoted << is an ordinary key", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {"<<": x}
`, map[string]string{"<<": "x"}, nil},
	{"null value reads as empty", `
apiVersion: v1
kind: Secret
metadata: {name: s}
data: {a: null, b: }
`, map[string]string{"a": "", "b": ""}, nil},
	{"null data is absent", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: null\n", map[string]string{}, nil},
}

// TestValuesResolveAliases reads values the way kubectl applies them: an
// alias reads the anchored value, not the alias name (review C, P7), and
// merge keys merge.
func TestValuesResolveAliases(t *testing.T) {

	for _, tt := range aliasValueCases {
		t.Run(tt.name, func(t *testing.T) {
			node := parse(t, tt.in)
			values, err := Values(node)
			require.NoError(t, err)
			got := map[string]string{}
			for _, v := range values {
				got[v.Key] = string(v.Bytes)
				if f, ok := tt.fields[v.Key]; ok {
					require.Equal(t, f, v.Field)
				}
			}
			require.Equal(t, tt.want, got)
			for k, want := range tt.want {
				v, found, err := Lookup(node, k)
				require.NoError(t, err)
				require.True(t, found, k)
				require.Equal(t, want, string(v.Bytes), k)
			}
		})
	}
}

// TestValuesShapeErrors: a data field that is not a map, or a value that is
// not a string, is an error naming the field - not "has no key" (review A,
// finding 13).
func TestValuesShapeErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantField string
		wantErr   string
	}{
		{"data is a list", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: [a]\n", "data", "data: is a YAML list, not a map of keys to values"},
		{"data is a scalar", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: text\n", "data", "data: is a YAML scalar, not a map"},
		{"stringData is a list", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: [a]\n", "stringData", "stringData: is a YAML list"},
		{"value is a list", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: [x]}\n", "data.a", "data.a: is a YAML list, not a string"},
		{"value is an alias of a map", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: &m {x: y}}\ndata: {a: *m}\n", "data.a", "data.a: is a YAML object, not a string"},
		{"key is a map", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {? {x: y} : z}\n", "data", "data: has a key that is a YAML object"},
		{"merge of a scalar", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {l: &s x}}\ndata: {<<: *s}\n", "data", "data: merges (<<) a YAML scalar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := parse(t, tt.in)
			_, err := Values(node)
			require.ErrorContains(t, err, tt.wantErr)
			require.Equal(t, tt.wantField, FieldOf(err))
			key := strings.TrimPrefix(tt.wantField, "data.")
			_, _, err = Lookup(node, key)
			require.ErrorContains(t, err, tt.wantErr, "Lookup reports the shape of the field it reads")
		})
	}
}

// TestLookupReadsOnlyItsKey: a broken value under another key of the same
// object does not stop a lookup (a source's tls.key is none of its
// business), while Values, which reads everything, reports it.
func TestLookupReadsOnlyItsKey(t *testing.T) {
	node := parse(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  tls.key: '!!'\n  ca.crt: aGVsbG8=\n")
	v, found, err := Lookup(node, "ca.crt")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, "hello", string(v.Bytes))
	_, _, err = Lookup(node, "tls.key")
	require.ErrorContains(t, err, "data.tls.key: invalid base64")
	_, err = Values(node)
	require.ErrorContains(t, err, "data.tls.key: invalid base64")
}

// TestMergeChainIsLinear: each level merges the previous one twice, which
// a naive expansion walks 2^levels times; this must return at once.
func TestMergeChainIsLinear(t *testing.T) {
	const levels = 60
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nspec:\n  l0: &l0 {k0: v0}\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d {<<: [*l%d, *l%d], k%d: v%d}\n", i, i, i-1, i-1, i, i)
	}
	fmt.Fprintf(&b, "data: {<<: [*l%d, *l%d]}\n", levels-1, levels-1)
	values, err := Values(parse(t, b.String()))
	require.NoError(t, err)
	require.Len(t, values, levels)
}

// TestIndexSeparatesAPIGroups: an object of another API group never stands
// in for the core object of the same kind and name (review C, P6), in
// whichever order they come.
func TestIndexSeparatesAPIGroups(t *testing.T) {
	core := parse(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: ca, namespace: gw}\n")
	other := parse(t, "apiVersion: example.com/v1\nkind: Secret\nmetadata: {name: ca, namespace: gw}\n")
	capi := parse(t, "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: prod, namespace: default}\n")
	eksa := parse(t, "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: prod, namespace: default}\n")
	ns := parse(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: gw}\n")
	fakeNS := parse(t, "apiVersion: example.com/v1\nkind: Namespace\nmetadata: {name: other}\n")
	secret := Key{Kind: "Secret", Namespace: "gw", Name: "ca"}
	cluster := Key{Kind: "Cluster", Namespace: "default", Name: "prod"}
	for _, items := range [][]*yaml.RNode{
		{other, core, capi, eksa, ns, fakeNS},
		{core, other, eksa, capi, fakeNS, ns},
	} {
		idx := NewIndex(items)
		require.Same(t, core, idx.Get(secret))
		require.Same(t, other, idx.GetIn("example.com", secret))
		require.Same(t, capi, idx.GetIn("cluster.x-k8s.io", cluster))
		require.Same(t, eksa, idx.GetIn("anywhere.eks.amazonaws.com", cluster))
		require.Nil(t, idx.Get(cluster), "no core Cluster")
		require.Equal(t, []*yaml.RNode{ns}, idx.Kind("Namespace"), "Kind lists core objects only")
		require.Empty(t, idx.Duplicates(), "the same name in two groups is two objects")
	}
	idx := NewIndex([]*yaml.RNode{other})
	require.Nil(t, idx.Get(secret), "an example.com Secret is not a core Secret")
}

func TestGroupOf(t *testing.T) {
	for in, want := range map[string]string{"v1": "", "": "", "apps/v1": "apps", "cluster.x-k8s.io/v1beta2": "cluster.x-k8s.io"} {
		require.Equal(t, want, GroupOf(in), in)
	}
}

func TestAt(t *testing.T) {
	doc := yaml.MustParse("anchored: &a v\nspec:\n  template:\n    metadata: {name: x}\n  list: [a]\n  none: null\n  ref: *a\n")
	for _, tc := range []struct {
		path []string
		want string // "" for nil
	}{
		{[]string{"spec", "template", "metadata", "name"}, "x"},
		{[]string{"spec", "missing"}, ""},
		{[]string{"spec", "list", "0"}, ""},
		{[]string{"spec", "none"}, ""},
		{[]string{"spec", "template", "metadata", "name", "deeper"}, ""},
		{[]string{"spec", "ref"}, "v"},
	} {
		got := At(doc, tc.path...)
		if tc.want == "" {
			require.Nil(t, got, "%v", tc.path)
			continue
		}
		require.NotNil(t, got, "%v", tc.path)
		require.Equal(t, tc.want, got.YNode().Value)
	}
}

// TestScalarAt pins ScalarAt on hostile input: an alias is followed only
// at the end of the path (not on the way, not through a merge key), a
// non-string scalar reads as written, a parent that is not a mapping and
// a value that is not a scalar read as "", and a duplicate key reads its
// first value.
func TestScalarAt(t *testing.T) {
	doc := yaml.MustParse(`anchored: &a v
obj: &o {k: inner}
nul: &n null
spec:
  str: x
  int: 5
  bool: true
  quoted: "007"
  empty: ""
  none: null
  tilde: ~
  list: [a]
  map: {k: v}
  text: scalar
  ref: *a
  refObj: *o
  refNull: *n
  viaAlias: *o
  merged: {<<: *o}
  dup: first
  dup: second
`)
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{"spec", "str"}, "x"},
		{[]string{"spec", "int"}, "5"},
		{[]string{"spec", "bool"}, "true"},
		{[]string{"spec", "quoted"}, "007"},
		{[]string{"spec", "empty"}, ""},
		{[]string{"spec", "none"}, ""},
		{[]string{"spec", "tilde"}, ""},
		{[]string{"spec", "missing"}, ""},
		{[]string{"spec", "list"}, ""},
		{[]string{"spec", "map"}, ""},
		{[]string{"spec", "list", "0"}, ""},
		{[]string{"spec", "text", "k"}, ""},
		{[]string{"spec", "none", "k"}, ""},
		{[]string{"spec", "ref"}, "v"},
		{[]string{"spec", "refObj"}, ""},
		{[]string{"spec", "refNull"}, ""},
		{[]string{"spec", "viaAlias", "k"}, ""},
		{[]string{"spec", "merged", "k"}, ""},
		{[]string{"spec", "dup"}, "first"},
	} {
		require.Equal(t, tc.want, ScalarAt(doc, tc.path...), "%v", tc.path)
	}
}

// TestIndexClusterScopedIgnoresNamespace: kustomize's namespace transformer
// sets metadata.namespace on kinds its built-in schema does not know -
// ClusterTrustBundle and trust-manager's Bundle among them - and the API
// server clears a namespace on a cluster-scoped object. Such an object is
// found by its name alone, and the same name with and without a namespace
// is one object written twice.
func TestIndexClusterScopedIgnoresNamespace(t *testing.T) {
	for _, tc := range []struct{ apiVersion, kind string }{
		{"certificates.k8s.io/v1beta1", "ClusterTrustBundle"},
		{"trust.cert-manager.io/v1alpha1", "Bundle"},
		{"admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"},
		{"admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"},
		{"apiregistration.k8s.io/v1", "APIService"},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition"},
		{"v1", "Namespace"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			withNS := parse(t, "apiVersion: "+tc.apiVersion+"\nkind: "+tc.kind+"\nmetadata: {name: a, namespace: team-a}\n")
			plain := parse(t, "apiVersion: "+tc.apiVersion+"\nkind: "+tc.kind+"\nmetadata: {name: a}\n")
			group := GroupOf(tc.apiVersion)
			idx := NewIndex([]*yaml.RNode{withNS})
			require.Same(t, withNS, idx.GetIn(group, Key{Kind: tc.kind, Name: "a"}))
			require.Equal(t, []*yaml.RNode{withNS}, idx.KindIn(group, tc.kind))
			idx = NewIndex([]*yaml.RNode{withNS, plain})
			require.Equal(t, []Key{{Kind: tc.kind, Name: "a"}}, idx.Duplicates(), "one object written twice")
		})
	}
	// A namespaced kind keeps its namespace in the key.
	secret := parse(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: a, namespace: team-a}\n")
	idx := NewIndex([]*yaml.RNode{secret})
	require.Nil(t, idx.Get(Key{Kind: "Secret", Name: "a"}))
	require.Same(t, secret, idx.Get(Key{Kind: "Secret", Namespace: "team-a", Name: "a"}))
}

// TestBoolAt: a boolean field reads as kubectl, Helm, Argo CD and Flux read
// it (sigs.k8s.io/yaml, YAML 1.1): yes, on, y and True are true; a quoted
// value is a string, which the API server refuses for a boolean.
func TestBoolAt(t *testing.T) {
	for in, want := range map[string]struct{ v, set bool }{
		"true": {true, true}, "True": {true, true}, "TRUE": {true, true}, "yes": {true, true}, "Yes": {true, true},
		"on": {true, true}, "ON": {true, true}, "y": {true, true}, "Y": {true, true},
		"false": {false, true}, "False": {false, true}, "no": {false, true}, "off": {false, true}, "n": {false, true}, "N": {false, true},
		`"true"`: {}, `'yes'`: {}, "!!str true": {}, "null": {}, "1": {}, "[true]": {}, "tru": {},
		"!!bool yes": {true, true}, "|\n    true": {},
	} {
		v, set := BoolAt(yaml.MustParse("spec:\n  f: "+in+"\n"), "spec", "f")
		require.Equal(t, want, struct{ v, set bool }{v, set}, in)
	}
	v, set := BoolAt(yaml.MustParse("spec: {}\n"), "spec", "f")
	require.False(t, v || set, "absent")
}
