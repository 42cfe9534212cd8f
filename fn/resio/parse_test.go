package resio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/synth"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// blockCases are items in every form the block parser follows, and in
// forms next to them it must decline.
var blockCases = []string{
	"- apiVersion: v1\n  kind: Secret\n  metadata:\n    labels:\n      app: app-1 # owner\n    x: [a, 'b', \"c\"] # flow\n  data:\n    # tuning\n    settings.yaml: |\n      level: 3\n      name: \"cm\"\n    k: 'it''s'\n  spec: {a: 1, b: [x, \"y\"], c: {}}\n  list:\n  - a\n  - {b: c}\n  - d: e\n    f: g\n",
	"- apiVersion: v1\n  a:\n    # c1\n    # c2\n    b: 1\n    # c3\n  c: 'q' # c4\n",
	"- a: # c5\n    e: f\n  g:\n  # c6\n  - h # c7\n  -   i\n  k: |-\n    x\n  l: 2 #c8\n",
	"- a: |+\n    one\n\n    two\n\n\n  b: |\n    x\n      deeper\n\n  c: [1, -2, 3.5, .inf, 0x1F, 0777, 1e3, true, ~, null, yes, 2026-11-22]\n",
	"- a: b\n\n  c: d\n\n\n  e:\n  - f\n\n  - g\n",
	"- a: b\n    c\n",
	"- a:\n  b: c\n",
	"- a: &x b\n  c: *x\n",
	"- a: !!str b\n",
	"- a: \"b\\nc\"\n",
	"- a: >\n    folded\n",
	"- a: |2\n    indented\n",
	"- a: b # c\n  # foot\n",
	"- a:\n    b: c\n  # between\n\n  d: e\n",
	"- a: [b,\n    c]\n",
	"- 'quoted key': b\n",
	"- a: b\n  a: c\n",
	"- a:   spaced  \n",
	"- a: x:y\n  b: http://x/y#z\n  c: a #b\n",
	"-   a: 1\n    b: 2\n",
	"- a:\n  - - nested\n",
	"- a:\n  -\n    b: c\n",
	"- a: {b: {c: [d, {e: f}]}, g: []}\n",
	"- a: [b, , c]\n",
	"- a: [b, c,]\n",
	"- a: {b}\n",
	"- a: {'b': \"c\", d: 'e''f'}\n",
	"- a: café\n",
	"- <<: {a: b}\n",
	"- a: <<\n  b: -\n  c: '-'\n",
	"- a: |\n    x\n  \n  b: c\n",
	"- {}\n",
	"- {kind: Service, metadata: {name: s}}\n",
	"- {kind: Service} # c\n",
	"- {kind: Service}\n  extra: x\n",
	"- {a: b}\n\n",
	"# before\n- a: b\n",
	"- # on the dash\n  a: b\n",
	"- a: " + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + "\n",
	"- a: " + strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1) + "\n",
}

// blockChunks returns item chunks from every source the tests have: the
// cases above, the splice and annotation cases, every golden input, and
// the synthetic lists in each shape.
func blockChunks(t testing.TB) []string {
	chunks := append([]string{}, blockCases...)
	chunks = append(chunks, spliceItems...)
	inputs, err := filepath.Glob("../../testdata/golden/*/input.yaml")
	require.NoError(t, err)
	var lists [][]byte
	for _, p := range inputs {
		text, err := os.ReadFile(p)
		require.NoError(t, err)
		input, err := testpki.ExpandTemplate(p, string(text))
		require.NoError(t, err)
		lists = append(lists, input)
	}
	for _, shape := range synth.Shapes {
		lists = append(lists, synth.ResourceList(synth.Options{Resources: 60, Bundles: 3, Seed: 5, Shape: shape}))
	}
	for _, l := range lists {
		lt, err := split(l)
		if err != nil {
			continue
		}
		for i := range lt.items {
			chunks = append(chunks, string(lt.raw(i)))
		}
	}
	return chunks
}

// TestBlockParserMatchesYAML: wherever the block parser gives a tree, it
// is the tree yaml.v3 gives, field for field; and it parses the items kpt
// and kustomize send.
func TestBlockParserMatchesYAML(t *testing.T) {
	p := newBlockParser()
	parsed := 0
	chunks := blockChunks(t)
	for _, c := range chunks {
		if requireSameTree(t, p, []byte(c)) {
			parsed++
		}
	}
	require.Greater(t, parsed, len(chunks)*3/4, "the block parser must take most items")
	for _, shape := range synth.Shapes {
		lt, err := split(synth.ResourceList(synth.Options{Resources: 120, Bundles: 3, Seed: 5, Shape: shape}))
		require.NoError(t, err)
		for i := range lt.items {
			require.NotNil(t, p.parse(lt.raw(i)), "%s: the block parser declined\n%s", shape, lt.raw(i))
		}
	}
}

// requireSameTree checks the block parser against yaml.v3 on raw and
// reports whether the block parser took it.
func requireSameTree(t testing.TB, p *blockParser, raw []byte) bool {
	got := p.parse(raw)
	if got == nil {
		return false
	}
	var want yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &want), "the block parser took what yaml.v3 refuses:\n%s", raw)
	// The document and sequence yaml.v3 wraps the item in are not kept.
	require.Equal(t, yaml.DocumentNode, want.Kind)
	require.Len(t, want.Content, 1)
	require.Equal(t, yaml.SequenceNode, want.Content[0].Kind)
	require.Len(t, want.Content[0].Content, 1)
	require.Equal(t, dumpTree(want.Content[0].Content[0]), dumpTree(got), "input:\n%s", raw)
	return true
}

func dumpTree(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%s%d tag=%q style=%d value=%q anchor=%q alias=%v L%d C%d head=%q line=%q foot=%q content=%v\n",
			strings.Repeat("  ", depth), n.Kind, n.Tag, n.Style, n.Value, n.Anchor, n.Alias != nil, n.Line, n.Column,
			n.HeadComment, n.LineComment, n.FootComment, n.Content == nil)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// FuzzBlockParserMatchesYAML: on any text, the block parser declines or
// gives yaml.v3's tree.
func FuzzBlockParserMatchesYAML(f *testing.F) {
	for _, c := range blockChunks(f) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		requireSameTree(t, newBlockParser(), raw)
	})
}
