package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestSnapshotCommand runs `rotate-certs snapshot` on what kubectl 1.33
// printed for `kubectl get secrets,configmaps -n envoy-gateway-system -o
// yaml` against a real API server (testdata/kubectl-get-list.yaml): the
// certificates come out as local-config manifests, the private key stays
// behind and is named on stderr, and -o replaces its file only on success.
func TestSnapshotCommand(t *testing.T) {
	list, err := os.ReadFile("testdata/kubectl-get-list.yaml")
	require.NoError(t, err)
	require.Contains(t, string(list), "tls.key:", "the fixture must hold a key for this test to mean anything")

	out, stderr, code := runIn(t, "", string(list), "snapshot")
	require.Equal(t, 0, code, stderr)
	docs := parseStream(t, out)
	require.Len(t, docs, 2)
	for _, d := range docs {
		require.Equal(t, "true", d.GetAnnotations()["config.kubernetes.io/local-config"])
		for _, server := range []string{"uid", "resourceVersion", "creationTimestamp"} {
			v, err := d.Pipe(yaml.Lookup("metadata", server))
			require.NoError(t, err)
			require.Nil(t, v, "%s must go", server)
		}
	}
	require.NotContains(t, out, "tls.key")
	require.NotContains(t, out, "mode: strict", "a value without a certificate is not kept")
	require.Contains(t, stderr, "Secret envoy-gateway-system/envoy-gateway: dropped data.tls.key: a private key, which a snapshot never copies")
	require.NotContains(t, stderr, "LS0tLS1CRUdJTiBQUklWQVRF", "the key is never echoed")

	// -o writes the file; a failed snapshot leaves it as it was.
	dir := t.TempDir()
	file := filepath.Join(dir, "sources.yaml")
	_, stderrText, err := run(t, dir, binary, "snapshot", "-o", file, filepath.Join(dir, "missing.yaml"))
	require.Error(t, err, stderrText)
	_, err = os.Stat(file)
	require.True(t, os.IsNotExist(err), "a failed snapshot writes nothing")
	fixture, err := filepath.Abs("testdata/kubectl-get-list.yaml")
	require.NoError(t, err)
	_, stderrText, err = run(t, dir, binary, "snapshot", "-o", file, fixture)
	require.NoError(t, err, stderrText)
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, out, string(written))

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\ndata: {ca.crt: '!!!'}\n"), 0o644))
	_, stderrText, code = runIn(t, dir, "", "snapshot", "-o", file, bad)
	require.Equal(t, 1, code)
	require.Contains(t, stderrText, "Secret n/s data.ca.crt is not base64")
	again, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, string(written), string(again), "a failed snapshot leaves the file as it was")
}
