package kube

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func parse(t *testing.T, s string) *yaml.RNode {
	t.Helper()
	n, err := yaml.Parse(s)
	require.NoError(t, err)
	return n
}

func TestValues(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]string
		fields  map[string]string
		wantErr string
	}{
		{"secret data decoded, stringData wins", `
apiVersion: v1
kind: Secret
metadata: {name: s}
data: {a: aGVsbG8=, b: Yg==}
stringData: {b: override}
`, map[string]string{"a": "hello", "b": "override"}, map[string]string{"a": "data.a", "b": "stringData.b"}, ""},
		{"base64 with line breaks", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  a: |\n    aGVs\n    bG8=\n", map[string]string{"a": "hello"}, nil, ""},
		{"configmap data and binaryData", `
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {a: plain}
binaryData: {b: Yg==}
`, map[string]string{"a": "plain", "b": "b"}, map[string]string{"a": "data.a", "b": "binaryData.b"}, ""},
		{"configmap stringData is not a thing", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nstringData: {a: x}\n", map[string]string{}, nil, ""},
		{"invalid base64 names the field", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {a: '!!'}\n", nil, nil, "data.a: invalid base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			values, err := Values(parse(t, tt.in))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.Equal(t, "data.a", FieldOf(err))
				return
			}
			require.NoError(t, err)
			got := map[string]string{}
			for _, v := range values {
				got[v.Key] = string(v.Bytes)
				if f, ok := tt.fields[v.Key]; ok {
					require.Equal(t, f, v.Field)
				}
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestSetAnnotationOnlyWhenDifferent(t *testing.T) {
	node := parse(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  annotations:\n    a: \"1\"\n")
	before := node.MustString()
	changed, err := SetAnnotation(node, "a", "1")
	require.NoError(t, err)
	require.False(t, changed)
	require.Equal(t, before, node.MustString())
	changed, err = SetAnnotation(node, "a", "2")
	require.NoError(t, err)
	require.True(t, changed)
}

func TestIndexRefsAndLocalConfig(t *testing.T) {
	a := parse(t, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n  namespace: ns\n  annotations:\n    internal.config.kubernetes.io/path: dir/a.yaml\n    internal.config.kubernetes.io/index: '2'\n")
	local := parse(t, "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: k\n  annotations:\n    config.kubernetes.io/local-config: 'true'\n")
	dup := parse(t, "apiVersion: v2\nkind: Secret\nmetadata: {name: a, namespace: ns}\n")
	idx := NewIndex([]*yaml.RNode{a, local, dup})
	require.Same(t, a, idx.Get(Key{Kind: "Secret", Namespace: "ns", Name: "a"}))
	require.Nil(t, idx.Get(Key{Kind: "Kptfile", Name: "k"}))
	require.Len(t, idx.Kind("Secret"), 1)
	require.Equal(t, []Key{{Kind: "Secret", Namespace: "ns", Name: "a"}}, idx.Duplicates())

	ref := RefOf(a)
	require.Equal(t, "Secret ns/a", ref.String())
	res := ref.Result("warning", "data.x", "msg")
	require.Equal(t, "dir/a.yaml", res.File.Path)
	require.Equal(t, 2, res.File.Index)
	require.Equal(t, "data.x", res.Field.Path)
	require.True(t, IsSOPSEncrypted(parse(t, "kind: Secret\nsops: {version: 3}\n")))
}

func TestStartsWithPEM(t *testing.T) {
	pem := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	b64 := base64.StdEncoding.EncodeToString([]byte(pem))
	for _, tc := range []struct {
		name, doc string
		want      bool
	}{
		{"secret data, base64 PEM", "kind: Secret\ndata:\n  a: aGVsbG8=\n  ca.crt: " + b64 + "\n", true},
		{"secret stringData PEM", "kind: Secret\nstringData:\n  ca.crt: |\n    -----BEGIN CERTIFICATE-----\n    x\n", true},
		{"configmap data PEM", "kind: ConfigMap\ndata:\n  ca.crt: |\n    -----BEGIN CERTIFICATE-----\n    x\n", true},
		{"configmap binaryData PEM", "kind: ConfigMap\nbinaryData:\n  ca.der: " + b64 + "\n", true},
		{"secret data not PEM", "kind: Secret\ndata:\n  a: aGVsbG8gd29ybGQgaGVsbG8gd29ybGQ=\n", false},
		{"PEM after text: read in full", "kind: ConfigMap\ndata:\n  a: |\n    note\n    -----BEGIN CERTIFICATE-----\n", false},
		{"wrapped base64: read in full", "kind: Secret\ndata:\n  a: |\n    LS0t\n    LS1CRUdJTiBD\n", false},
		{"configmap data is base64 text, not decoded", "kind: ConfigMap\ndata:\n  a: " + b64 + "\n", false},
		{"short value", "kind: Secret\ndata:\n  a: LS0t\n", false},
		{"not a string", "kind: Secret\ndata:\n  a: [x]\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, StartsWithPEM(yaml.MustParse(tc.doc)))
			if !tc.want {
				return
			}
			values, err := Values(yaml.MustParse(tc.doc))
			require.NoError(t, err)
			found := false
			for _, v := range values {
				found = found || strings.HasPrefix(string(v.Bytes), "-----BEGIN ")
			}
			require.True(t, found, "a value Values reads starts with the header")
		})
	}
}

// TestDecodeBase64 holds DecodeBase64 to the API server's rule: a []byte
// field of the JSON it decodes is base64.StdEncoding, which skips line
// breaks (\n, \r: a YAML literal block, kubectl's wrapped output) and
// refuses anything else that is not base64 - a space, a tab, a missing
// pad, the URL alphabet. A plain YAML scalar continued on a second line
// folds the break into a space, so such a value is refused as well.
func TestDecodeBase64(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		ok             bool
	}{
		{"plain", "aGVsbG8=", "hello", true},
		{"line breaks", "aGVs\nbG8=\n", "hello", true},
		{"CRLF line breaks", "aGVs\r\nbG8=\r\n", "hello", true},
		{"empty", "", "", true},
		{"a space (a folded plain scalar)", "aGVs bG8=", "", false},
		{"a tab", "aGVs\tbG8=", "", false},
		{"a trailing space", "aGVsbG8= ", "", false},
		{"no padding", "aGVsbG8", "", false},
		{"URL alphabet", "-_8=", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeBase64(tt.in)
			if !tt.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
		})
	}
}

// TestValuesRefusesFoldedBase64: a Secret value written as a plain scalar
// over two lines reads as two words joined by a space, which the API
// server refuses; so does Values, naming the field.
func TestValuesRefusesFoldedBase64(t *testing.T) {
	_, err := Values(parse(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  a: aGVs\n    bG8=\n"))
	require.ErrorContains(t, err, "data.a: invalid base64")
}
