package resio

import (
	"errors"
	"io"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/stretchr/testify/require"
)

func TestSpliceDocuments(t *testing.T) {
	original := "# file header\n---\na: 1   # kept as written\n---  # separator comment\n# only a comment\n---\nb: 2\n"
	replace := func(k int, _ string) (string, bool) {
		if k == 1 {
			return "b: 3\n", true
		}
		return "never used\n", false
	}
	out, n, ok := spliceDocuments([]byte(original), replace, []string{"c: 4\n"})
	require.True(t, ok)
	require.Equal(t, 2, n, "two documents hold a resource")
	require.Equal(t, "# file header\n---\na: 1   # kept as written\n---  # separator comment\n# only a comment\n---\nb: 3\n---\nc: 4\n", string(out))

	out, n, ok = spliceDocuments([]byte("a: 1"), func(int, string) (string, bool) { return "", false }, []string{"b: 2\n"})
	require.True(t, ok)
	require.Equal(t, 1, n)
	require.Equal(t, "a: 1\n---\nb: 2\n", string(out), "a last line without a newline gets one before the next document")

	_, _, ok = spliceDocuments([]byte("a: 1\r\n"), replace, nil)
	require.False(t, ok, "CRLF files are rewritten by kyaml's reader; not spliced")
	_, _, ok = spliceDocuments([]byte("[a\n"), replace, nil)
	require.False(t, ok, "a document that does not parse, where the text does not decide")
}

// TestHoldsResourceByText holds the text rule to the parser: where the
// text decides, it decides as yaml.v3's parse does.
func TestHoldsResourceByText(t *testing.T) {
	for _, tc := range []struct {
		doc     string
		decided bool
	}{
		{"", true},
		{"\n\n", true},
		{"# only a comment\n  # indented\n", true},
		{"---\n# a comment\n", true},
		{"--- # a comment on the marker\napiVersion: v1\n", true},
		{"apiVersion: v1\nkind: ConfigMap\n", true},
		{"# head\n\nkind: Secret\n", true},
		{"metadata:\n  name: x\n", true},
		{"a.b/c-d_e: 1\n", true},
		{"x:\n", true},
		{"null\n", false},
		{"~\n", false},
		{"{}\n", false},
		{"{a: 1}\n", false},
		{"- a\n", false},
		{"\"quoted\": 1\n", false},
		{"? complex\n: key\n", false},
		{"%YAML 1.2\n---\na: 1\n", false},
		{"a:b\n", false},
		{"1a: x\n", false},
		{"  indented: 1\n", false},
		{"--- {a: 1}\n", false},
		{"...\n", false},
	} {
		t.Run(tc.doc, func(t *testing.T) {
			holds, decided := holdsResourceByText(tc.doc)
			require.Equal(t, tc.decided, decided)
			if !decided {
				return
			}
			var node yaml.Node
			err := yaml.NewDecoder(strings.NewReader(tc.doc)).Decode(&node)
			if errors.Is(err, io.EOF) {
				require.False(t, holds, "an empty document holds nothing")
				return
			}
			require.NoError(t, err)
			want := !yaml.IsYNodeEmptyDoc(&node) && !yaml.IsMissingOrNull(yaml.NewRNode(&node))
			require.Equal(t, want, holds)
		})
	}
}
