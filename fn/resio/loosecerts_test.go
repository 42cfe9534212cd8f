package resio

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// TestLooseDocumentsListPEM: a document that is no Kubernetes object
// (chart values, a program's test input) is listed as certificate
// material when a value carries PEM armour as written or base64-encoded
// at any of the three places the armour may start in a group of base64 -
// a bundle with a comment line before its first block, encoded whole, as
// much as one that begins with its armour. Before, base64 was seen only
// when the armour began the encoded text (or at a multiple of three bytes
// into it): the two bundles below changed with nothing said.
func TestLooseDocumentsListPEM(t *testing.T) {
	ca := testpki.NewCA("resio-loose-ca", testpki.Date(2026, 1, 1), testpki.Days(365))
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	bundle := func(comment string) string { return b64(comment + string(ca.PEM())) }
	const one, two = "# corp roots\n", "# our corp roots\n"
	require.Equal(t, 1, len(one)%3)
	require.Equal(t, 2, len(two)%3)
	files := map[string]string{
		"plain.yaml":    "identityTrustAnchorsPEM: |\n  " + strings.ReplaceAll(strings.TrimSpace(string(ca.PEM())), "\n", "\n  ") + "\n",
		"encoded.yaml":  "caBundle: " + b64(string(ca.PEM())) + "\n",
		"bundle-0.yaml": "customCABundle: " + bundle("# roots\n\n") + "\n",
		"bundle-1.yaml": "customCABundle: " + bundle(one) + "\n",
		"bundle-2.yaml": "proxy:\n  trust:\n  - " + bundle(two) + "\n",
		"key.yaml":      "tests:\n- input: " + b64("key: "+string(ca.KeyPEM())) + "\n",
		"none.yaml":     "notes: a PEM file starts with a BEGIN line\nblob: " + b64("# roots\n---\nBEGIN: CERTIFICATE\n") + "\n",
		"object.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ca\ndata:\n  ca.crt: " + bundle(one) + "\n",
	}
	dir := t.TempDir()
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	set := ReadPaths([]string{dir}, nil)
	require.Empty(t, set.Problems)
	var got []string
	for _, c := range set.CertFiles {
		rel, err := filepath.Rel(dir, c.Path)
		require.NoError(t, err)
		got = append(got, rel)
	}
	require.Equal(t, []string{"bundle-0.yaml", "bundle-1.yaml", "bundle-2.yaml", "encoded.yaml", "key.yaml", "plain.yaml"}, got,
		"an object's values are the object's (read as trust, not listed); text without armour is none")
}
