package resio

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/synth"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// spliceItems are items with the shapes splicing must handle: comments in
// every position, block scalars holding "#" lines and blank lines, compact
// sequences, flow mappings, quoted values, an item whose first key is not
// apiVersion, nested annotations.
var spliceItems = []string{
	`# head comment of the item
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: app # line comment
    namespace: ns
    labels: {app: web}
  # comment before spec
  spec:
    replicas: 2
    template:
      metadata:
        labels:
          app: web
      spec:
        containers:
        - name: main
          image: "registry/app:1"
          args:
          - --flag
          volumeMounts:
          - {name: trust, mountPath: /etc/trust}
        volumes:
        - name: trust
          secret:
            secretName: trust
`,
	`- kind: ConfigMap
  apiVersion: v1
  metadata:
    name: cm
    annotations:
      existing: 'yes'
  data:
    script: |
      # not a comment: content
      echo one

      echo three
    # a real comment heading the next key
    other: "quoted: value"
    last: |+
      keep trailing blank lines

`,
	`- apiVersion: v1
  kind: Secret
  metadata:
    name: s
  type: Opaque
  data:
    ca.crt: b2xk # old value
    extra: ZXh0cmE=
`,
}

type edit func(t *testing.T, rng *rand.Rand, n *yaml.RNode)

var spliceEdits = []edit{
	func(t *testing.T, rng *rand.Rand, n *yaml.RNode) { // annotation on metadata
		require.NoError(t, n.PipeE(yaml.SetAnnotation(fmt.Sprintf("rotate-certs.dev/a%d", rng.IntN(3)), fmt.Sprintf("v%d", rng.IntN(1000)))))
	},
	func(t *testing.T, rng *rand.Rand, n *yaml.RNode) { // pod template annotation
		if n.GetKind() != "Deployment" {
			return
		}
		require.NoError(t, n.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec", "template", "metadata", "annotations"),
			yaml.SetField("rotate-certs.dev/trust-hash", yaml.NewStringRNode(fmt.Sprintf("sha256:%x", rng.Uint64())))))
	},
	func(t *testing.T, rng *rand.Rand, n *yaml.RNode) { // replace or add a data value
		if n.Field("data") == nil {
			return
		}
		keys := []string{"ca.crt", "other", "script", "new.key"}
		v := yaml.NewStringRNode(fmt.Sprintf("line one %d\nline two # not a comment\n", rng.IntN(100)))
		if rng.IntN(2) == 0 {
			v.YNode().Style = yaml.LiteralStyle
		}
		require.NoError(t, n.PipeE(yaml.LookupCreate(yaml.MappingNode, "data"), yaml.SetField(keys[rng.IntN(len(keys))], v)))
	},
	func(t *testing.T, rng *rand.Rand, n *yaml.RNode) { // a new top-level key
		require.NoError(t, n.PipeE(yaml.SetField("status", yaml.NewMapRNode(&map[string]string{"phase": "x"}))))
	},
}

// TestSpliceMatchesFullEncoding applies random kyaml spliceEdits to varied items
// and checks that the spliced text parses to exactly what encoding the whole
// item gives: same fields, values and comments.
func TestSpliceMatchesFullEncoding(t *testing.T) {
	items := append([]string{}, spliceItems...)
	// Items as kpt sends them: the migration id annotation is taken out of
	// the tree and its line out of the text.
	for _, shape := range []synth.Shape{synth.Plain, synth.KptRender, synth.Kustomize} {
		lt := mustSplit(t, synth.ResourceList(synth.Options{Resources: 60, Bundles: 3, Seed: 3, Shape: shape}))
		for i := range lt.items {
			items = append(items, string(lt.raw(i)))
		}
	}
	ip := newItemParser()
	rng := rand.New(rand.NewPCG(1, 2))
	spliced, cut := 0, 0
	pairs := &pairCache{fp: &fingerprinter{}} // shared across items, as in a run
	for round := 0; round < 600; round++ {
		raw := []byte(items[rng.IntN(len(items))])
		info := readItem(raw, func(b []byte) string { return string(b) })
		p, err := ip.parseItem(raw, info, info.synced)
		require.NoError(t, err)
		for i, n := 0, 1+rng.IntN(3); i < n; i++ {
			spliceEdits[rng.IntN(len(spliceEdits))](t, rng, p.node)
		}
		if ip.sum(p.root) == p.sum {
			continue
		}
		var full strings.Builder
		require.NoError(t, encode(&full, p.root))
		text, ok := splice(raw, p.root, p.keys, p.cutLine, pairs)
		if !ok {
			continue
		}
		spliced++
		if p.cutLine > 0 {
			cut++
			require.NotContains(t, string(text), migrationID)
		}
		got, err := ip.parseChunk(text)
		require.NoError(t, err, "spliced text does not parse:\n%s", text)
		want, err := ip.parseChunk([]byte(full.String()))
		require.NoError(t, err)
		require.Equal(t, want.node.MustString(), got.node.MustString(), "round %d:\n--- original\n%s--- spliced\n%s", round, raw, text)
	}
	require.Greater(t, spliced, 300, "most spliceEdits must take the splice path")
	require.Greater(t, cut, 100, "items with a cut line must be spliced too")
}

// TestSpliceRefusesWhatItCannotSee: a removed key and an in-place value
// change are not of the fresh-pair shape; splice must decline, not guess.
func TestSpliceRefusesWhatItCannotSee(t *testing.T) {
	raw := []byte(spliceItems[2])
	ip := newItemParser()
	p, err := ip.parseChunk(raw)
	require.NoError(t, err)
	require.NoError(t, p.node.PipeE(yaml.Lookup("data"), yaml.Clear("extra")))
	require.NoError(t, p.node.PipeE(yaml.SetAnnotation("a", "b")))
	_, ok := splice(raw, p.root, p.keys, 0, nil)
	require.False(t, ok, "a removed key must make splice decline")

	p, err = ip.parseChunk(raw)
	require.NoError(t, err)
	p.node.Field("type").Value.YNode().Value = "Changed" // in place: no fresh node
	_, ok = splice(raw, p.root, p.keys, 0, nil)
	require.False(t, ok, "with no fresh node there is nothing splice can place")
}

func mustSplit(t *testing.T, b []byte) *listText {
	t.Helper()
	lt, err := split(b)
	require.NoError(t, err)
	return lt
}

// A comment after a replaced value, at its key's indentation (the key's
// foot comment in YAML), was written by the encoder and copied from the
// original lines: it doubled at every change of the value (1, 2, 4, 8).
func TestSpliceWritesAFootCommentOnce(t *testing.T) {
	raw := []byte("- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: trust\n  data:\n    ca-bundle.crt: |\n      old\n    # the trailing comment\n  immutable: false\n")
	text := raw
	for round := 0; round < 4; round++ {
		info := readItem(text, func(b []byte) string { return string(b) })
		p, err := newItemParser().parseItem(text, info, info.synced)
		require.NoError(t, err)
		value := yaml.NewScalarRNode(fmt.Sprintf("new %d\n", round))
		value.YNode().Style = yaml.LiteralStyle
		require.NoError(t, p.node.PipeE(yaml.Lookup("data"), yaml.SetField("ca-bundle.crt", value)))
		spliced, ok := splice(text, p.root, p.keys, p.cutLine, nil)
		require.True(t, ok)
		require.Equal(t, 1, strings.Count(string(spliced), "# the trailing comment"), "round %d:\n%s", round, spliced)
		require.Contains(t, string(spliced), fmt.Sprintf("new %d\n    # the trailing comment\n  immutable: false\n", round))
		text = spliced
	}
}

// A comment at column 0 that more of the item follows is inside the item:
// the splitter gave it to the next item as a head comment.
func TestSplitKeepsAColumnZeroCommentInItsItem(t *testing.T) {
	lt := mustSplit(t, []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: example.com/v1\n  kind: Widget\n  metadata:\n    name: a\n# inside a\n  spec: {}\n# before b\n- apiVersion: example.com/v1\n  kind: Widget\n  metadata:\n    name: b\n"))
	require.Len(t, lt.items, 2)
	require.Equal(t, "- apiVersion: example.com/v1\n  kind: Widget\n  metadata:\n    name: a\n# inside a\n  spec: {}\n", string(lt.raw(0)))
	require.True(t, strings.HasPrefix(string(lt.raw(1)), "# before b\n- apiVersion"))
}
