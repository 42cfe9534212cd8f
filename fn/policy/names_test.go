package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The names a policy gives are names of Kubernetes objects and the
// function writes objects under them: a target named ../../ca was created
// and appended to a file outside its place. Names, namespaces and data keys
// are checked as the API server checks them, and the error names the field
// without repeating a value that is not plain text.
func TestNamesAreKubernetesNames(t *testing.T) {
	bundle := func(source, target string) string {
		return "spec:\n  trustBundles:\n  - name: gw\n    sources: [" + source + "]\n    target: " + target + "\n"
	}
	ok := "{secret: {name: ca, namespace: gw}}"
	tests := []struct {
		name, spec, field, msg string
	}{
		{"target name with a path", bundle(ok, "{name: ../../ca}"), "spec.trustBundles[0].target.name", `"../../ca" is not a valid Secret name`},
		{"target name with a slash", bundle(ok, "{name: a/b, kind: ConfigMap}"), "spec.trustBundles[0].target.name", `"a/b" is not a valid ConfigMap name`},
		{"target name in upper case", bundle(ok, "{name: Trust}"), "spec.trustBundles[0].target.name", "lowercase DNS subdomain"},
		{"target name too long", bundle(ok, "{name: "+strings.Repeat("a", 254)+"}"), "spec.trustBundles[0].target.name", "at most 253"},
		{"target namespace with a path", bundle(ok, "{name: t, namespaces: [../etc]}"), "spec.trustBundles[0].target.namespaces[0]", `"../etc" is not a valid namespace`},
		{"target namespace with a dot", bundle(ok, "{name: t, namespaces: [a.b]}"), "spec.trustBundles[0].target.namespaces[0]", "DNS label"},
		{"target key with a slash", bundle(ok, "{name: t, key: ../ca.crt}"), "spec.trustBundles[0].target.key", `"../ca.crt" is not a valid data key`},
		{"source name", bundle("{secret: {name: 'ca/x', namespace: gw}}", "{name: t}"), "spec.trustBundles[0].sources[0].secret.name", "not a valid Secret name"},
		{"source namespace", bundle("{configMap: {name: ca, namespace: GW}}", "{name: t}"), "spec.trustBundles[0].sources[0].configMap.namespace", "not a valid namespace"},
		{"source key", bundle("{secret: {name: ca, namespace: gw, key: 'a b'}}", "{name: t}"), "spec.trustBundles[0].sources[0].secret.key", "not a valid data key"},
		{"workload name", bundle(ok, "{name: t}") + "    restart: {workloads: [{kind: Deployment, name: ../x}]}\n", "spec.trustBundles[0].restart.workloads[0].name", "not a valid workload name"},
		{"workload namespace", bundle(ok, "{name: t}") + "    restart: {workloads: [{kind: Deployment, name: x, namespace: a_b}]}\n", "spec.trustBundles[0].restart.workloads[0].namespace", "not a valid namespace"},
		{"domain with a slash", bundle(ok, "{name: t}") + "    domain: mesh/anchors\n", "spec.trustBundles[0].domain", `"mesh/anchors" must be a lowercase DNS name`},
		{"domain in upper case", bundle(ok, "{name: t}") + "    domain: Mesh\n", "spec.trustBundles[0].domain", "lowercase DNS name"},
		{"domain too long", bundle(ok, "{name: t}") + "    domain: " + strings.Repeat("a", 64) + "\n", "spec.trustBundles[0].domain", "at most 63"},
		{"a name that is key material", bundle(ok, "{name: \"-----BEGIN PRIVATE KEY-----\\nMC4CAQAw\\n\"}"), "spec.trustBundles[0].target.name", "a string of 37 bytes over 2 lines, PEM data is not a valid Secret name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, err := decodeErrorsAt(t, tt.spec, tt.field)
			require.Contains(t, at, tt.msg)
			require.NotContains(t, err.Error(), "PRIVATE KEY")
		})
	}
	_, err := decode(t, bundle("{secret: {name: ca.v1, namespace: gw-1, key: ca_bundle-1.crt}}", "{name: trust.gw, namespaces: [a-1, b]}")+"    domain: mesh.anchors-1\n")
	require.NoError(t, err, "dotted names, digits and '_' in keys are valid")
}
