package resio

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/synth"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestReadFileMatchesKyaml holds readFile to kyaml's ByteReader as
// ReadTree and ReadPaths configure it, on every YAML file of the
// repository, the files of a synthetic package and hand-picked ones: where
// readFile reads a file, it gives the same resources (annotations,
// comments, styles, lines and columns); where kyaml fails, readFile leaves
// the file to it.
func TestReadFileMatchesKyaml(t *testing.T) {
	files := readFileCases(t)
	dp := newDocumentParser()
	for _, rel := range []string{"p.yaml", ""} { // ReadTree's reading, then ReadPaths'
		read := 0
		for name, text := range files {
			if readFileMatchesKyaml(t, []byte(text), rel, dp, name) {
				read++
			}
		}
		require.Greater(t, read, len(files)/2, "readFile reads most files")
	}
}

// FuzzReadFileMatchesKyaml is TestReadFileMatchesKyaml on any file: the
// annotations readFile sets on the common shape without kyaml's filters
// (annotate) among what it holds to kyaml's reader. Seeds: that test's
// files, and annotations of every shape kyaml's bookkeeping treats apart.
func FuzzReadFileMatchesKyaml(f *testing.F) {
	for _, text := range readFileCases(f) {
		f.Add([]byte(text))
	}
	for _, meta := range []string{"", "metadata:\n", "metadata: {}\n", "metadata: null\n", "metadata:\n  name: a\n",
		"metadata:\n  annotations: {}\n  name: a\n", "metadata:\n  annotations:\n  name: a\n", "metadata:\n  annotations: x\n",
		"metadata:\n  name: a\n  annotations:\n    a: b\n  annotations:\n    c: d\n", "metadata: &m\n  name: a\nspec: *m\n",
		"metadata:\n  annotations:\n    config.kubernetes.io/path: q.yaml\n", "metadata:\n  annotations:\n    config.kubernetes.io/id: '3'\n",
		"metadata: !!map\n  name: a\n", "metadata:\n  name: a\n  annotations: !!map\n    b: c\n", "metadata:\n  name: a\nmetadata:\n  name: b\n"} {
		f.Add([]byte("apiVersion: v1\nkind: ConfigMap\n" + meta + "---\nkind: A\nmetadata:\n  name: b\n  x:\n  - 1\n"))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		dp := newDocumentParser()
		for _, rel := range []string{"p.yaml", ""} {
			readFileMatchesKyaml(t, text, rel, dp, "input")
		}
	})
}

// readFileMatchesKyaml reads text with readFile and kyaml's reader as
// ReadTree (rel set) or ReadPaths (rel "") configure it and fails t when
// readFile reads it and the two differ; it says whether readFile read it.
func readFileMatchesKyaml(t *testing.T, text []byte, rel string, dp *documentParser, name string) bool {
	t.Helper()
	r := &kio.ByteReader{Reader: bytes.NewReader(text), DisableUnwrapping: true, OmitReaderAnnotations: true}
	if rel != "" {
		r = &kio.ByteReader{Reader: bytes.NewReader(text), DisableUnwrapping: true, PreserveSeqIndent: true,
			SetAnnotations: map[string]string{kioutil.PathAnnotation: rel, kioutil.LegacyPathAnnotation: rel}}
	}
	want, wantErr := r.Read()
	got, ok := readFile(text, rel, dp)
	if !ok {
		return false
	}
	require.NoError(t, wantErr, "%s: readFile read what kyaml refuses", name)
	require.Equal(t, dumpNodes(want), dumpNodes(got), name)
	return true
}

// readFileCases are the files TestReadFileMatchesKyaml reads: hand-picked
// ones, every YAML file of the repository's goldens and a synthetic
// package in every shape, by name.
func readFileCases(tb testing.TB) map[string]string {
	files := map[string]string{
		"leading-separator.yaml": "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
		"comments.yaml":          "# head\napiVersion: v1\nkind: ConfigMap # why\nmetadata:\n  name: a\n# foot\n",
		"empty-docs.yaml":        "---\n---\n# only a comment\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n---\n",
		"null-doc.yaml":          "null\n---\na: 1\n",
		"wide-then-none.yaml":    "a:\n  - x\n---\nb: 1\n---\nc:\n- y\n",
		"annotated.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/index: '7'\n    internal.config.kubernetes.io/path: other.yaml\n",
		"no-newline.yaml":        "a: 1",
		"bad-separator.yaml":     "a: 1\n--- b: 2\nc: 3\n",
		"crlf.yaml":              "a: 1\r\nb: 2\r\n",
		"broken.yaml":            "a: [\n",
		"metadata-list.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: [a]\n",
		"list.yaml":              "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n",
		"empty-annotations.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations: {}\n  name: a\n",
		"annotations-last.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    a: b\n  name: a\ndata: {}\n",
	}
	for path, b := range golden.YAMLFiles(tb) {
		files[path] = string(b)
	}
	for _, shape := range synth.Shapes {
		for i, f := range synth.Package(synth.Options{Resources: 40, Bundles: 3, Seed: 2, Shape: shape, PerFile: 7}) {
			files[string(shape)+"/"+f.Path+"#"+string(rune('a'+i%26))] = string(f.Data)
		}
	}
	return files
}

// dumpNodes writes every node of every resource with its position,
// style and comments.
func dumpNodes(nodes []*yaml.RNode) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%s%d tag=%q style=%d value=%q anchor=%q L%d C%d head=%q line=%q foot=%q\n",
			strings.Repeat("  ", depth), n.Kind, n.Tag, n.Style, n.Value, n.Anchor, n.Line, n.Column,
			n.HeadComment, n.LineComment, n.FootComment)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	for _, n := range nodes {
		b.WriteString("---\n")
		d := n.Document()
		walk(d, 0)
	}
	return b.String()
}
