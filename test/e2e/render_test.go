package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRenderRefusesDuplicateKeys: a file of the package in which a mapping
// defines a key twice (a manifest appended without "---") fails the
// render with the file, the line and the key, and nothing is written:
// kyaml would keep the first value and render what the file does not say.
func TestRenderRefusesDuplicateKeys(t *testing.T) {
	dir := stageExample(t, "envoy-gateway")
	caFile := filepath.Join(dir, "gateway-ca.yaml")
	data, err := os.ReadFile(caFile)
	require.NoError(t, err)
	text := string(data)
	require.Equal(t, 1, strings.Count(text, "\napiVersion:"), "one document, whose apiVersion is on line 3")
	appended := text + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: envoy-gateway-system}\n"
	require.NoError(t, os.WriteFile(caFile, []byte(appended), 0o644))
	requireRenderFails(t, dir, fmt.Sprintf(`rotate-certs render: gateway-ca.yaml:%d: mapping key "apiVersion" already defined at line 3 (a missing --- between two documents?); 2 more duplicate key(s) in the file`,
		strings.Count(text, "\n")+1))
}
