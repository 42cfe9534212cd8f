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
	}
	for path, b := range golden.YAMLFiles(t) {
		files[path] = string(b)
	}
	for _, shape := range synth.Shapes {
		for i, f := range synth.Package(synth.Options{Resources: 40, Bundles: 3, Seed: 2, Shape: shape, PerFile: 7}) {
			files[string(shape)+"/"+f.Path+"#"+string(rune('a'+i%26))] = string(f.Data)
		}
	}
	dp := newDocumentParser()
	for _, rel := range []string{"p.yaml", ""} { // ReadTree's reading, then ReadPaths'
		read := 0
		for name, text := range files {
			r := &kio.ByteReader{Reader: bytes.NewReader([]byte(text)), DisableUnwrapping: true, OmitReaderAnnotations: true}
			if rel != "" {
				r = &kio.ByteReader{Reader: bytes.NewReader([]byte(text)), DisableUnwrapping: true, PreserveSeqIndent: true,
					SetAnnotations: map[string]string{kioutil.PathAnnotation: rel, kioutil.LegacyPathAnnotation: rel}}
			}
			want, wantErr := r.Read()
			got, ok := readFile([]byte(text), rel, dp)
			if !ok {
				continue
			}
			read++
			require.NoError(t, wantErr, "%s: readFile read what kyaml refuses", name)
			require.Equal(t, dumpNodes(want), dumpNodes(got), name)
		}
		require.Greater(t, read, len(files)/2, "readFile reads most files")
	}
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
