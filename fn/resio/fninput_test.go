package resio

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInputHint(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        string // "" means: run it
	}{
		{"a ResourceList", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n", ""},
		{"a ResourceList after comments", "# from kpt\n---\napiVersion: config.kubernetes.io/v1\nkind: \"ResourceList\" # the wrapper\n", ""},
		{"JSON is left to the reader", `{"kind": "ResourceList", "items": []}`, ""},
		{"no kind line is left to the reader", "items: []\n", ""},
		{"empty", " \n\n", "function mode read nothing on stdin"},
		{"plain manifests", "apiVersion: v1\nkind: Secret\nmetadata: {name: ca, namespace: gw}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: roots}\n",
			"received 2 plain manifest(s) (Secret gw/ca, ConfigMap roots): to render the files of a directory in place: rotate-certs render DIR; to report the expiry of manifests on stdin: rotate-certs check -"},
		{"many manifests are named up to three", strings.Repeat("kind: Secret\nmetadata: {name: s}\n---\n", 5),
			"received 5 plain manifest(s) (Secret s, Secret s, Secret s, ...)"},
		{"a kubectl List", "apiVersion: v1\nkind: List\nitems:\n- kind: Secret\n  metadata: {name: a}\n",
			"received a List of 1 item(s), as kubectl get -o yaml prints it: rotate-certs check - reports the expiry of what it holds; rotate-certs snapshot -"},
		{"a typed list", "apiVersion: v1\nkind: SecretList\nitems: []\n", "received a SecretList of 0 item(s)"},
		{"not YAML", "kind: Secret\nmetadata: [\n", "function mode reads a ResourceList on stdin, and this is not one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := InputHint([]byte(tc.input))
			if tc.want == "" {
				require.Empty(t, got)
				return
			}
			require.Contains(t, got, tc.want)
			require.Contains(t, got, "rotate-certs --help", "every hint ends with where help is")
		})
	}
	require.Contains(t, NoFunctionConfig(), "--fn-config")
	require.Contains(t, ConfigMapFunctionConfig(), "--fn-config")
}
