package manifests

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpliceDocuments(t *testing.T) {
	original := "# file header\n---\na: 1   # kept as written\n---  # separator comment\n# only a comment\n---\nb: 2\n"
	replace := func(k int) (string, bool) {
		if k == 1 {
			return "b: 3\n", true
		}
		return "never used\n", false
	}
	out, n, ok := SpliceDocuments([]byte(original), replace, []string{"c: 4\n"})
	require.True(t, ok)
	require.Equal(t, 2, n, "two documents hold a resource")
	require.Equal(t, "# file header\n---\na: 1   # kept as written\n---  # separator comment\n# only a comment\n---\nb: 3\n---\nc: 4\n", string(out))

	out, n, ok = SpliceDocuments([]byte("a: 1"), func(int) (string, bool) { return "", false }, []string{"b: 2\n"})
	require.True(t, ok)
	require.Equal(t, 1, n)
	require.Equal(t, "a: 1\n---\nb: 2\n", string(out), "a last line without a newline gets one before the next document")

	_, _, ok = SpliceDocuments([]byte("a: 1\r\n"), replace, nil)
	require.False(t, ok, "CRLF files are rewritten by kyaml's reader; not spliced")
	_, _, ok = SpliceDocuments([]byte("a: [\n"), replace, nil)
	require.False(t, ok, "a document that does not parse")
}
