package trustbundle

import (
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func parseNode(t *testing.T, s string) *yaml.RNode {
	t.Helper()
	n, err := yaml.Parse(s)
	require.NoError(t, err)
	return n
}

func TestSetValueKeepsEverythingElse(t *testing.T) {
	in := `# head comment
apiVersion: v1
kind: Secret
metadata:
  name: s # the name
data:
  other: "b3RoZXI=" # kept
  ca.crt: b2xk
`
	node := parseNode(t, in)
	field, changed, err := SetValue(node, "ca.crt", []byte("new"))
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "data.ca.crt", field)
	out := node.MustString()
	require.Contains(t, out, "# head comment")
	require.Contains(t, out, "name: s # the name")
	require.Contains(t, out, `other: "b3RoZXI=" # kept`)
	require.Contains(t, out, "ca.crt: bmV3")

	// The same value again changes nothing, byte for byte.
	_, changed, err = SetValue(node, "ca.crt", []byte("new"))
	require.NoError(t, err)
	require.False(t, changed)
	require.Equal(t, out, node.MustString())
}

func TestSetValueStringDataAndConfigMap(t *testing.T) {
	sec := parseNode(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  ca.crt: old\n")
	field, _, err := SetValue(sec, "ca.crt", []byte("line1\nline2\n"))
	require.NoError(t, err)
	require.Equal(t, "stringData.ca.crt", field)
	require.Contains(t, sec.MustString(), "ca.crt: |\n    line1\n    line2\n")

	cm := parseNode(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	field, changed, err := SetValue(cm, "ca-bundle.crt", []byte("pem\n"))
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "data.ca-bundle.crt", field)
	v, found, err := kube.Lookup(cm, "ca-bundle.crt")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, "pem\n", string(v.Bytes))
}

func TestSetValueWhereAndComments(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		value     string
		wantField string
		// want is the whole object after the write.
		want string
	}{
		{
			name:      "secret data keeps its line comment",
			in:        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  ca.crt: b2xk # trailing\n  other: eA== # other\n",
			value:     "new",
			wantField: "data.ca.crt",
			want:      "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  ca.crt: bmV3 # trailing\n  other: eA== # other\n",
		},
		{
			name:      "secret data keeps its head comment and quoting",
			in:        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  # the bundle\n  ca.crt: \"b2xk\"\n",
			value:     "new",
			wantField: "data.ca.crt",
			want:      "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  # the bundle\n  ca.crt: \"bmV3\"\n",
		},
		{
			name:      "stringData literal keeps its comment",
			in:        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  ca.crt: | # readable\n    old\n",
			value:     "line1\nline2\n",
			wantField: "stringData.ca.crt",
			want:      "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  ca.crt: | # readable\n    line1\n    line2\n",
		},
		{
			name:      "configmap binaryData moves to data, the empty binaryData goes",
			in:        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbinaryData:\n  ca-bundle.crt: b2xkCg==\n",
			value:     "new\n",
			wantField: "data.ca-bundle.crt",
			want:      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  ca-bundle.crt: |\n    new\n",
		},
		{
			name:      "configmap binaryData with the same bytes still moves",
			in:        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbinaryData:\n  ca-bundle.crt: bmV3Cg==\n  truststore.p12: AAE=\n",
			value:     "new\n",
			wantField: "data.ca-bundle.crt",
			want:      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbinaryData:\n  truststore.p12: AAE=\ndata:\n  ca-bundle.crt: |\n    new\n",
		},
		{
			name:      "configmap key in data and binaryData: data written, binaryData copy removed",
			in:        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  ca-bundle.crt: x # kept\nbinaryData:\n  ca-bundle.crt: b2xkCg==\n",
			value:     "new\n",
			wantField: "data.ca-bundle.crt",
			want:      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  ca-bundle.crt: | # kept\n    new\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := parseNode(t, tt.in)
			key := "ca.crt"
			if node.GetKind() == "ConfigMap" {
				key = "ca-bundle.crt"
			}
			field, changed, err := SetValue(node, key, []byte(tt.value))
			require.NoError(t, err)
			require.True(t, changed)
			require.Equal(t, tt.wantField, field)
			out := node.MustString()
			require.Equal(t, tt.want, out)

			// Written once, the value is where Lookup finds it and a
			// second write changes nothing, byte for byte.
			v, found, err := kube.Lookup(node, key)
			require.NoError(t, err)
			require.True(t, found)
			require.Equal(t, tt.wantField, v.Field)
			require.Equal(t, tt.value, string(v.Bytes))
			_, changed, err = SetValue(node, key, []byte(tt.value))
			require.NoError(t, err)
			require.False(t, changed)
			require.Equal(t, out, node.MustString())
		})
	}
}

// binary is a JKS-like value, not valid UTF-8; binaryB64 is its base64.
var binary = []byte{0xfe, 0xed, 0xfe, 0xed, 0x00, 0x01}

const binaryB64 = "/u3+7QAB"

// binaryValueCases are objects a binary value is written into (binary by
// default), with the field it goes to and the object afterwards.
var binaryValueCases = []struct {
	name, in   string
	value      []byte // default binary
	wantField  string
	wantChange bool
	want       string // the whole object afterwards
}{
	{
		name:       "secret: added to data",
		in:         "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  ca.crt: eA== # keep me\n",
		wantField:  "data.t.jks",
		wantChange: true,
		want:       "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  ca.crt: eA== # keep me\n  t.jks: " + binaryB64 + "\n",
	},
	{
		name:       "secret: unchanged value is left alone",
		in:         "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  t.jks: '" + binaryB64 + "' # quoted on purpose\n",
		wantField:  "data.t.jks",
		wantChange: false,
		want:       "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  t.jks: '" + binaryB64 + "' # quoted on purpose\n",
	},
	{
		name:       "secret: a stringData copy is moved to data",
		in:         "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  t.jks: old\n",
		wantField:  "data.t.jks",
		wantChange: true,
		want:       "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  t.jks: " + binaryB64 + "\n",
	},
	{
		name:       "configmap: written to binaryData, not data",
		in:         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  ca-bundle.crt: x\n",
		wantField:  "binaryData.t.jks",
		wantChange: true,
		want:       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  ca-bundle.crt: x\nbinaryData:\n  t.jks: " + binaryB64 + "\n",
	},
	{
		name:       "configmap: a text copy in data is removed",
		in:         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  t.jks: stale\n  other: y\n",
		wantField:  "binaryData.t.jks",
		wantChange: true,
		want:       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  other: y\nbinaryData:\n  t.jks: " + binaryB64 + "\n",
	},
	{
		name:       "configmap: equal bytes in data still move to binaryData",
		in:         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  t.jks: abc\n",
		value:      []byte("abc"),
		wantField:  "binaryData.t.jks",
		wantChange: true,
		want:       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbinaryData:\n  t.jks: YWJj\n",
	},
	{
		name:       "configmap: unchanged binaryData is left alone",
		in:         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbinaryData:\n  t.jks: " + binaryB64 + "\n",
		wantField:  "binaryData.t.jks",
		wantChange: false,
		want:       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbinaryData:\n  t.jks: " + binaryB64 + "\n",
	},
}

func TestSetBinaryValue(t *testing.T) {

	for _, tc := range binaryValueCases {
		t.Run(tc.name, func(t *testing.T) {
			node := yaml.MustParse(tc.in)
			value := tc.value
			if value == nil {
				value = binary
			}
			field, changed, err := setBinaryValue(node, "t.jks", value)
			if err != nil {
				t.Fatal(err)
			}
			if field != tc.wantField || changed != tc.wantChange {
				t.Errorf("field %q changed %v, want %q %v", field, changed, tc.wantField, tc.wantChange)
			}
			if got := node.MustString(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			v, found, err := kube.Lookup(node, "t.jks")
			if err != nil || !found || string(v.Bytes) != string(value) {
				t.Errorf("read back %q found %v err %v", v.Bytes, found, err)
			}
		})
	}
}

// A value that carries a YAML anchor other values alias cannot be replaced
// in place: the aliases would change with it (another key silently holding
// the bundle) and the anchor would vanish from the output, leaving an alias
// to nothing - a file no tool parses. It is an error; an anchor nothing
// aliases is kept.
func TestSetValueAnchoredValue(t *testing.T) {
	aliased := parseNode(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  ca.crt: &ca b2xk\n  backup.crt: *ca\n")
	before := aliased.MustString()
	_, _, err := SetValue(aliased, "ca.crt", []byte("new"))
	require.ErrorContains(t, err, "anchor")
	require.Equal(t, before, aliased.MustString())

	unused := parseNode(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  ca.crt: &ca old\n")
	_, changed, err := SetValue(unused, "ca.crt", []byte("new"))
	require.NoError(t, err)
	require.True(t, changed)
	out := unused.MustString()
	require.Contains(t, out, "ca.crt: &ca new")
	_, err = yaml.Parse(out)
	require.NoError(t, err)
}
