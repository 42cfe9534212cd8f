package trustdiff

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestMemoOnlyKeepsWhatTheNextBuildTakes: what a Build read of an object
// the next Build holds is lent to it, the same; of any other object it is
// forgotten (Only), and the next Build reads it anew.
func TestMemoOnlyKeepsWhatTheNextBuildTakes(t *testing.T) {
	kept, rewritten := yaml.NewMapRNode(nil), yaml.NewMapRNode(nil)
	m := NewMemo()
	read := m.of(kept)
	read.hasCerts = true
	require.Same(t, read, m.of(kept)) // one record of an object through a Build
	m.of(rewritten).hasCerts = true
	m.done()
	m.Only(func(item *yaml.RNode) bool { return item == kept })
	_, lent := m.reads.Before(rewritten)
	require.False(t, lent)
	require.Same(t, read, m.of(kept))
	require.False(t, m.of(rewritten).hasCerts)
	var none *Memo
	none.Only(func(*yaml.RNode) bool { return false }) // a nil Memo keeps nothing, and forgets nothing
}
