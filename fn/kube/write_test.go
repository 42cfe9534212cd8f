package kube

import (
	"testing"

	"github.com/stretchr/testify/require"
)

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
			node := parse(t, tt.in)
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
			v, found, err := Lookup(node, key)
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

func TestSetAnnotationInPlace(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "a replaced value keeps its comment and quoting",
			in:   "metadata:\n  annotations:\n    k: \"old\" # stale\n    x: y\n",
			want: "metadata:\n  annotations:\n    k: \"new\" # stale\n    x: y\n",
		},
		{
			name: "null annotations filled in place, comment kept",
			in:   "metadata:\n  annotations: null   # nothing yet\n  labels: {app: a}\nspec: {}\n",
			want: "metadata:\n  annotations: # nothing yet\n    k: 'new'\n  labels: {app: a}\nspec: {}\n",
		},
		{
			name: "empty annotations filled in place",
			in:   "metadata:\n  annotations:\n  labels: {app: a}\n",
			want: "metadata:\n  annotations:\n    k: 'new'\n  labels: {app: a}\n",
		},
		{
			name: "empty flow annotations become a block in place",
			in:   "metadata:\n  annotations: {} # none\n  labels: {app: a}\n",
			want: "metadata:\n  annotations: # none\n    k: 'new'\n  labels: {app: a}\n",
		},
		{
			name: "empty metadata stays before spec",
			in:   "metadata: {}\nspec: {}\n",
			want: "metadata:\n  annotations:\n    k: 'new'\nspec: {}\n",
		},
		{
			name: "absent annotations appended after labels, as kyaml does",
			in:   "metadata:\n  labels: {app: a}\n",
			want: "metadata:\n  labels: {app: a}\n  annotations:\n    k: 'new'\n",
		},
		{
			name: "absent metadata appended",
			in:   "spec: {}\n",
			want: "spec: {}\nmetadata:\n  annotations:\n    k: 'new'\n",
		},
		{
			name: "a non-empty flow map keeps its style",
			in:   "metadata:\n  annotations: {x: y}\n",
			want: "metadata:\n  annotations: {x: y, k: 'new'}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := parse(t, tt.in)
			changed, err := SetAnnotation(node, "k", "new")
			require.NoError(t, err)
			require.True(t, changed)
			out := node.MustString()
			require.Equal(t, tt.want, out)
			require.Equal(t, "new", node.GetAnnotations("k")["k"])

			// Re-parsed and set again: nothing changes.
			again := parse(t, out)
			changed, err = SetAnnotation(again, "k", "new")
			require.NoError(t, err)
			require.False(t, changed)
			require.Equal(t, out, again.MustString())
		})
	}
}

func TestSetAnnotationNotAMapping(t *testing.T) {
	node := parse(t, "kind: Secret\nmetadata:\n  name: s\n  annotations: text\n")
	_, err := SetAnnotation(node, "k", "v")
	require.ErrorContains(t, err, "metadata.annotations is not a mapping")
}
