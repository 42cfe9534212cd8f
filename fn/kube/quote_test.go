package kube

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestPlainTellsNamesFromContent(t *testing.T) {
	key := "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIMiWb3AXL2lcDSTGNMlLYO8wMFnhGYYLk8AKFlIK1Fqs\n-----END PRIVATE KEY-----\n"
	for _, s := range []string{
		"envoy-gateway-trust", "ca.crt", "apps/v1", "Deployment", "720h", "30d",
		"2026-11-22T00:00:00+01:00", "rotate-certs.dev/v1alpha1", "Gate_Way", "",
		strings.Repeat("a", 253), "RotationPolicy gateway-trust",
		"/tmp/TestCheckDirectoryWalk3230320016/001/nested/deeper/b.yml", "KubeadmControlPlaneTemplateV1beta2Version12345",
	} {
		require.True(t, Plain(s), s)
		require.Equal(t, fmt.Sprintf("%q", s), Quote(s))
		require.Equal(t, s, Safe(s))
	}
	for _, s := range []string{
		key, strings.ReplaceAll(key, "\n", " "),
		"MC4CAQAwBQYDK2VwBCIEIMiWb3AXL2lcDSTGNMlLYO8wMFnhGYYLk8AKFlIK1Fqs", // key bytes
		"name: MC4CAQAwBQYDK2VwBCIEIMiWb3AXL2lc", strings.Repeat("a", 254), "a\nb", "tab\there", "\xff",
	} {
		require.False(t, Plain(s), s)
		require.NotContains(t, Quote(s), "MC4C")
		require.NotContains(t, Safe(s), "PRIVATE")
	}
	require.Equal(t, "a string of 119 bytes over 3 lines, PEM data", Describe(key))
	require.Equal(t, "<a string of 3 bytes over 2 lines>", Safe("a\nb"))
	require.True(t, plainPath(strings.Repeat("dir/", 100)+"file.yaml"), "a path may be longer than a name")
	// A directory name is whatever the file system allows: each part of a
	// path is judged on its own, printable non-ASCII text passes.
	for _, p := range []string{"Clusters/Prod2/EuWest1/Team7/Apps/Gateway/trust.yaml", "clusters/prød/trust.yaml",
		"clusters/my staging/trust.yaml", "クラスター/本番/trust.yaml"} {
		require.True(t, plainPath(p), p)
		require.Equal(t, p, SafePath(p))
	}
	for _, p := range []string{"x/MC4CAQAwBQYDK2VwBCIEIMiWb3AXL2lcDSTGNMlLYO8wMFnhGYYLk8AKFlIK1Fqs/a.yaml",
		"x/-----BEGIN PRIVATE KEY-----/a.yaml", "x/\u202egnp.yaml", "x/\x1b[31mred/a.yaml", "x/\xff/a.yaml"} {
		require.False(t, plainPath(p), p)
		require.NotContains(t, SafePath(p), "MC4C")
		require.NotContains(t, SafePath(p), "PRIVATE")
	}
}

// kyaml's InvalidNodeKindError appends the refused node, whole, to its
// message; ScrubError cuts it and keeps the error chain.
func TestScrubError(t *testing.T) {
	node, err := yaml.Parse("|\n  -----BEGIN PRIVATE KEY-----\n  MC4CAQAw\n")
	require.NoError(t, err)
	kerr := yaml.ErrorIfInvalid(node, yaml.MappingNode)
	require.ErrorContains(t, kerr, "node contents")
	wrapped := fmt.Errorf("reading items[3]: %w", kerr)
	scrubbed := ScrubError(wrapped)
	require.Equal(t, "reading items[3]: wrong node kind: expected MappingNode but got ScalarNode (the node is not shown)", scrubbed.Error())
	var target *yaml.InvalidNodeKindError
	require.True(t, errors.As(scrubbed, &target), "the chain is kept")
	plain := errors.New("no node here")
	require.Same(t, plain, ScrubError(plain))
	require.NoError(t, ScrubError(nil))
	require.Equal(t, "x (the node is not shown)", ScrubMessage("x, content summary: [0:{value:\"secret\"}]"))
}

// Every message that quotes its input goes through ScrubMessage: a line
// kyaml repeats is described unless plain, and any PEM armour or private
// key name left is cut (found by FuzzProcess: a ResourceList whose line
// "---PRIVATE KEY" reached the error as kyaml's separator error).
func TestScrubMessageQuotedInput(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"failed to read ResourceList input: invalid document separator: ---PRIVATE KEY",
			"failed to read ResourceList input: invalid document separator: <a string of 14 bytes>"},
		{"invalid document separator: ---MC4CAQAwBQYDK2VwBCIEIMiWb3AXL2lcDSTGNMlLYO8wMFnhGYYLk8AKFlIK1Fqs",
			"invalid document separator: <a string of 67 bytes>"},
		{"invalid document separator: ---x", "invalid document separator: ---x"},
		{"invalid document separator: -----BEGIN RSA PRIVATE KEY-----\nnext",
			"invalid document separator: <a string of 31 bytes, PEM data>\nnext"},
		{"yaml: unmarshal errors: cannot unmarshal `-----BEGIN RSA PRIVATE KEY-----` into int",
			"yaml: unmarshal errors: cannot unmarshal `<input text not shown: it may hold key material>"},
		{"value PRIVATE KEY here", "value <input text not shown: it may hold key material>"},
		// a Secret's data quoted whole (kustomize's ID conflict, found by
		// FuzzDiff), PEM armour in base64 at each alignment
		{`conflict: [{"data":{"tls.key":"LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1DNENBUUF3"}}]`,
			`conflict: [{"data":{"tls.key":"<input text not shown: it may hold key material>`},
		{"k: " + base64.StdEncoding.EncodeToString([]byte("x-----BEGIN PRIVATE KEY-----\nMC4CAQAw")),
			"k: <input text not shown: it may hold key material>"},
		{"k: " + base64.StdEncoding.EncodeToString([]byte("xy-----END PRIVATE KEY-----\n")),
			"k: <input text not shown: it may hold key material>"},
		{"no key here", "no key here"},
	} {
		got := ScrubMessage(tc.in)
		require.Equal(t, tc.want, got, tc.in)
		for _, m := range []string{"PRIVATE KEY", "-----BEGIN", "MC4CAQAw"} {
			require.NotContains(t, got, m)
		}
	}
}

// TestScrubMessageCutsWhatItCut: the scrubber asks pki.PEMAt for armour,
// as written and in base64; each marker it held itself before (armour, the
// name of a key block, armour in base64 at each of three alignments) is
// still cut wherever it stands in a word.
func TestScrubMessageCutsWhatItCut(t *testing.T) {
	for _, m := range []string{"-----BEGIN", "-----END", "PRIVATE KEY",
		"LS0tLS1CRUdJ", "0tLS0tQkVH", "LS0tLUJFR0lO", "LS0tLS1FTk", "0tLS0tRU5E", "LS0tLUVOR"} {
		for _, word := range []string{m, "ab" + m + "cd"} {
			msg := "field tls.key: \"" + word + "\" is not a name"
			require.Equal(t, `field tls.key: "<input text not shown: it may hold key material>`, ScrubMessage(msg), m)
		}
	}
}
