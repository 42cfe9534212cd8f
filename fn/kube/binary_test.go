package kube

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestSetBinaryValue(t *testing.T) {
	bin := []byte{0xfe, 0xed, 0xfe, 0xed, 0x00, 0x01}
	const b64 = "/u3+7QAB"
	tests := []struct {
		name, in   string
		value      []byte // default bin
		wantField  string
		wantChange bool
		want       string // the whole object afterwards
	}{
		{
			name:       "secret: added to data",
			in:         "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  ca.crt: eA== # keep me\n",
			wantField:  "data.t.jks",
			wantChange: true,
			want:       "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  ca.crt: eA== # keep me\n  t.jks: " + b64 + "\n",
		},
		{
			name:       "secret: unchanged value is left alone",
			in:         "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  t.jks: '" + b64 + "' # quoted on purpose\n",
			wantField:  "data.t.jks",
			wantChange: false,
			want:       "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  t.jks: '" + b64 + "' # quoted on purpose\n",
		},
		{
			name:       "secret: a stringData copy is moved to data",
			in:         "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  t.jks: old\n",
			wantField:  "data.t.jks",
			wantChange: true,
			want:       "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  t.jks: " + b64 + "\n",
		},
		{
			name:       "configmap: written to binaryData, not data",
			in:         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  ca-bundle.crt: x\n",
			wantField:  "binaryData.t.jks",
			wantChange: true,
			want:       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  ca-bundle.crt: x\nbinaryData:\n  t.jks: " + b64 + "\n",
		},
		{
			name:       "configmap: a text copy in data is removed",
			in:         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  t.jks: stale\n  other: y\n",
			wantField:  "binaryData.t.jks",
			wantChange: true,
			want:       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  other: y\nbinaryData:\n  t.jks: " + b64 + "\n",
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
			in:         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbinaryData:\n  t.jks: " + b64 + "\n",
			wantField:  "binaryData.t.jks",
			wantChange: false,
			want:       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbinaryData:\n  t.jks: " + b64 + "\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := yaml.MustParse(tc.in)
			value := tc.value
			if value == nil {
				value = bin
			}
			field, changed, err := SetBinaryValue(node, "t.jks", value)
			if err != nil {
				t.Fatal(err)
			}
			if field != tc.wantField || changed != tc.wantChange {
				t.Errorf("field %q changed %v, want %q %v", field, changed, tc.wantField, tc.wantChange)
			}
			if got := node.MustString(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			v, found, err := Lookup(node, "t.jks")
			if err != nil || !found || string(v.Bytes) != string(value) {
				t.Errorf("read back %q found %v err %v", v.Bytes, found, err)
			}
		})
	}
}
