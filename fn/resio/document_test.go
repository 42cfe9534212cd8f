package resio

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestDocumentParserMatchesYAML holds the document parser to yaml.v3 on
// every document of the repository's YAML files and on hand-picked
// shapes: where it parses, it gives yaml.v3's tree node for node (kinds,
// tags, styles, values, comments, lines and columns).
func TestDocumentParserMatchesYAML(t *testing.T) {
	docs := documentSeeds(t)
	parsed := 0
	dp := newDocumentParser()
	for _, doc := range docs {
		if requireSameDocument(t, dp, []byte(doc)) {
			parsed++
		}
	}
	t.Logf("%d of %d documents parsed by the document parser", parsed, len(docs))
	require.Greater(t, parsed, len(docs)/3, "many documents are in the parser's subset")
}

// FuzzDocumentParserMatchesYAML: on any text, the document parser
// declines or gives yaml.v3's tree.
func FuzzDocumentParserMatchesYAML(f *testing.F) {
	for _, doc := range documentSeeds(f) {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		requireSameDocument(t, newDocumentParser(), raw)
	})
}

// documentSeeds returns hand-picked documents and every document of the
// repository's YAML files, cut at "---" lines.
func documentSeeds(t testing.TB) []string {
	docs := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
		"a: 1\nb:\n- x\n- y: 2\n  z: [1, 2]\nc: {d: e}\n",
		"a: |\n  line\n  two\nb: 'q'\nc: \"d\"\n",
		"a: 1 # comment\n# head of b\nb: 2\n",
		"a: 1\n\n\n",
		"a:\n  b:\n    c: null\n  d: ~\n",
		"# leading comment\na: 1\n",
		"# a\n# b\nkey: v\nk2: v2\n",
		"# a\n\nkey: v\n",
		"# a\n\n# b\nkey: v\n",
		"\n# a\nkey: v\n",
		"\n\nkey: v\n",
		"  # indented\nkey: v\n",
		"#a\nkey: v\n",
		"# a\n\n\n# b\n\nkey: v\n",
		"# a\n#\n# b\nkey: v\n# c\nk2: v2\n",
		"# a\n  \nkey: v\n",
		"# only a comment\n",
		"# a\n\n",
		"# a\n- b\n",
		"# a\n\n# b\n\n# c\nkey:\n  # d\n  e: f\n",
		"---\na: 1\n",
		"a: 1\n# trailing\n",
		"- a\n",
		"{a: 1}\n",
		"'a': 1\n",
		"a: &x 1\nb: *x\n",
		"a: 1",
		"a: >\n  folded\n",
	}
	for _, b := range golden.YAMLFiles(t) {
		parts := strings.Split(string(b), "\n---\n")
		for i, part := range parts {
			if i < len(parts)-1 {
				part += "\n"
			}
			docs = append(docs, part)
		}
	}
	return docs
}

// requireSameDocument checks the document parser against yaml.v3's
// decoder on raw and reports whether the document parser took it.
func requireSameDocument(t testing.TB, dp *documentParser, raw []byte) bool {
	got := dp.Parse(raw)
	if got == nil {
		return false
	}
	var want yaml.Node
	require.NoError(t, yaml.NewDecoder(bytes.NewReader(raw)).Decode(&want), "the document parser took what yaml.v3 refuses:\n%s", raw)
	require.Equal(t, dumpTree(&want), dumpTree(got), "input:\n%s", raw)
	return true
}

// TestDocumentsOwnTheirNodes: the parser's slabs are used again for each
// document, so each document it gives holds copies of its own (compact):
// parsing the next documents leaves an earlier one as it was.
func TestDocumentsOwnTheirNodes(t *testing.T) {
	dp := newDocumentParser()
	require.NotNil(t, dp.Parse([]byte("kind: Namespace\nmetadata:\n  name: warm\n"))) // the slabs exist
	first := dp.Parse([]byte("# head\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\ndata:\n  a: '1'\n  b: [x, y]\n"))
	require.NotNil(t, first)
	want, err := yaml.NewRNode(first).String()
	require.NoError(t, err)
	for i := range 50 {
		require.NotNil(t, dp.Parse(fmt.Appendf(nil, "kind: Secret\nmetadata:\n  name: other-%d\nstringData:\n  k: v\n", i)))
	}
	got, err := yaml.NewRNode(first).String()
	require.NoError(t, err)
	require.Equal(t, want, got)
}
