package resio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSharedLendsUnchangedFiles holds Shared to its word: a second read
// takes the very nodes of each file whose path and text are the same, and
// parses again a file whose text changed; a read without it shares nothing.
func TestSharedLendsUnchangedFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	write("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	write("b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
	sh := NewShared()
	first := ReadBuiltShared([]string{dir}, sh)
	require.Len(t, first.Items, 2)

	write("b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {x: y}\n")
	second := ReadBuiltShared([]string{dir}, sh)
	require.Len(t, second.Items, 2)
	require.Same(t, first.Items[0], second.Items[0], "a.yaml unchanged: the same node")
	require.NotSame(t, first.Items[1], second.Items[1], "b.yaml changed: parsed again")
	require.Equal(t, "y", second.Items[1].GetDataMap()["x"])

	third := ReadBuiltShared([]string{dir}, sh)
	require.Same(t, second.Items[1], third.Items[1], "what the second read parsed is lent to the third")
	require.NotSame(t, first.Items[0], ReadBuilt([]string{dir}, nil).Items[0], "no Shared, no sharing")
}
