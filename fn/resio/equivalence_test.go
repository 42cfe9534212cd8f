package resio_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/internal/synth"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var processor = rotate.Processor{Now: func() time.Time { return testpki.GoldenNow }}

// viaKyaml is the straightforward path: kyaml reads, processes, writes.
func viaKyaml(t *testing.T, input []byte) ([]byte, error) {
	t.Helper()
	var out bytes.Buffer
	err := resio.RunKyaml(input, &out, processor.Run)
	return out.Bytes(), err
}

// viaFastPath is what function mode does.
func viaFastPath(t *testing.T, input []byte) (out []byte, handled bool, err error) {
	t.Helper()
	var buf bytes.Buffer
	handled, err = resio.RunFast(input, &buf, rotate.Needs, processor.Run)
	if !handled {
		require.Zero(t, buf.Len(), "nothing may be written before falling back")
		return nil, false, err
	}
	return buf.Bytes(), true, err
}

// readList reads a ResourceList with kyaml's reader, which must accept it,
// and returns the reader (for functionConfig and results) and the items.
func readList(t *testing.T, b []byte) (*kio.ByteReadWriter, []*yaml.RNode) {
	t.Helper()
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(b), KeepReaderAnnotations: true}
	items, err := rw.Read()
	require.NoError(t, err, "output does not parse:\n%s", b)
	return rw, items
}

// normalized parses a ResourceList and returns each part re-encoded by
// kyaml, so that two outputs compare by content: same items in the same
// order, same fields, values and comments, same functionConfig and results.
func normalized(t *testing.T, b []byte) []string {
	t.Helper()
	rw, items := readList(t, b)
	var out []string
	for _, it := range items {
		out = append(out, it.MustString())
	}
	if rw.FunctionConfig != nil {
		// The functionConfig is echoed, never read by kustomize or kpt: it
		// compares by data. The fast path copies its text, comments where
		// they were; kyaml drops or moves comments that trail it (found by
		// FuzzFastPathMatchesKyaml).
		fc := rw.FunctionConfig.Copy()
		stripComments(fc.YNode())
		out = append(out, "functionConfig: "+fc.MustString())
	}
	if rw.Results != nil {
		// Results compare as data: decoded, then marshalled canonically
		// (the fast path quotes every string, kyaml only where needed).
		var results framework.Results
		require.NoError(t, yaml.Unmarshal([]byte(rw.Results.MustString()), &results))
		canonical, err := yaml.Marshal(results)
		require.NoError(t, err)
		out = append(out, "results: "+string(canonical))
	}
	return out
}

func stripComments(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		stripComments(c)
	}
}

func requireEquivalent(t *testing.T, input []byte, wantFast bool) {
	t.Helper()
	want, wantErr := viaKyaml(t, input)
	got, handled, gotErr := viaFastPath(t, input)
	require.Equal(t, wantFast, handled, "fast path taken")
	if !handled {
		return
	}
	require.Equal(t, wantErr != nil, gotErr != nil, "both paths must agree on failure: kyaml %v, fast %v", wantErr, gotErr)
	require.Equal(t, normalized(t, want), normalized(t, got))
}

func TestFastPathMatchesKyamlOnGoldenCorpus(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/golden/*/input.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, p := range dirs {
		t.Run(filepath.Base(filepath.Dir(p)), func(t *testing.T) {
			text, err := os.ReadFile(p)
			require.NoError(t, err)
			input, err := testpki.ExpandTemplate(p, string(text))
			require.NoError(t, err)
			requireEquivalent(t, input, true)
		})
	}
}

func TestFastPathMatchesKyamlOnSyntheticList(t *testing.T) {
	requireEquivalent(t, synth.ResourceList(synth.Options{Resources: 1200, Bundles: 20, Seed: 7}), true)
}

const edgeCases = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
# a comment between items
- apiVersion: v1
  kind: Secret
  metadata:
    name: ca
    namespace: gw
    annotations:
      config.kubernetes.io/path: gw/ca.yaml
      config.kubernetes.io/index: '0'
  data:
    ca.crt: {{b64 "ca-2026"}}
- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: blank-lines
    annotations: {}
  spec:
    script: |
      echo one

      echo three # not a comment
- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: anchors
  spec:
    base: &base {size: 1}
    copy: *base
- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: plain # kept as is
  spec: {a: 1, b: [x, "y"]}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: kpt-style
    annotations:
      config.kubernetes.io/path: gw/cm.yaml
  data: {k: v}
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    now: "2026-11-22T00:00:00Z"
    trustBundles:
    - name: gw
      sources: [{secret: {name: ca, namespace: gw}}]
      target: {name: trust}
`

func TestFastPathMatchesKyamlOnEdgeCases(t *testing.T) {
	input, err := testpki.ExpandTemplate("edge", edgeCases)
	require.NoError(t, err)
	requireEquivalent(t, input, true)
}

// TestFastPathAgreesOnAnnotationErrors: mixed internal and legacy
// annotation formats are an error in kyaml; the fast path must fail alike.
func TestFastPathAgreesOnAnnotationErrors(t *testing.T) {
	input, err := testpki.ExpandTemplate("edge", strings.Replace(edgeCases,
		"      config.kubernetes.io/path: gw/cm.yaml", "      internal.config.kubernetes.io/path: gw/cm.yaml\n      config.kubernetes.io/path: gw/cm.yaml", 1))
	require.NoError(t, err)
	_, wantErr := viaKyaml(t, input)
	require.Error(t, wantErr)
	_, handled, gotErr := viaFastPath(t, input)
	require.True(t, handled)
	require.Error(t, gotErr)
}

func TestFastPathFallsBack(t *testing.T) {
	base, err := testpki.ExpandTemplate("edge", edgeCases)
	require.NoError(t, err)
	tests := map[string]struct{ input, reason string }{
		"indented items": {strings.Replace(string(base), "items:\n# a comment between items\n- apiVersion: v1\n  kind: Secret", "items:\n  - apiVersion: v1\n    kind: Secret", 1),
			"line 4: items indented"},
		"a lone CR": {strings.Replace(string(base), "\n", "\r", 1), "line 1: a CR"},
		// Found by FuzzFastPathMatchesKyaml: a block scalar's value ends
		// with the last line break, or without it.
		"no final line break": {strings.TrimSuffix(string(base), "\n"), "no line break at the end"},
		"two documents":       {string(base) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "a second YAML document"},
		"flow items":          {"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}]\n", "line 3: items written in flow style"},
		"alias across items":  {strings.Replace(string(base), "spec: {a: 1, b: [x, \"y\"]}", "spec: *base", 1), "does not parse alone"},
		"no ResourceList":     {"apiVersion: v1\nkind: List\nitems: []\n", "no top-level kind: ResourceList"},
		// Found by FuzzFastPathMatchesKyaml: kyaml moves such a comment
		// into another item.
		"comment, blank line, item": {strings.Replace(string(base), "# a comment between items\n", "# a comment between items\n\n", 1), "line 5: a blank line after a comment"},
		// Found by FuzzFastPathMatchesKyaml: kyaml reads the first items:
		// key, the splitter read both lists.
		"items twice": {string(base) + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: x}\n", "items appears twice"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, handled, err := viaFastPath(t, []byte(tc.input))
			require.False(t, handled, "non-canonical input must go to kyaml")
			require.ErrorIs(t, err, resio.ErrNotCanonical)
			require.ErrorContains(t, err, tc.reason, "the reason, and where")
		})
	}
}

// TestCRLFTakesTheFastPath: kyaml's reader turns CRLF into LF before
// reading; so does the fast path, with the same output.
func TestCRLFTakesTheFastPath(t *testing.T) {
	input := synth.ResourceList(synth.Options{Resources: 200, Bundles: 4, Seed: 2, Shape: synth.KptRender})
	crlf := bytes.ReplaceAll(input, []byte("\n"), []byte("\r\n"))
	want, wantErr := viaKyaml(t, crlf)
	require.NoError(t, wantErr)
	got, handled, err := viaFastPath(t, crlf)
	require.True(t, handled)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

// TestUntouchedItemsAreCopiedByteForByte shows the point of the fast path:
// an unrelated resource keeps its exact bytes (kyaml would reformat the flow
// mapping and quoting), while a changed target is re-encoded.
func TestUntouchedItemsAreCopiedByteForByte(t *testing.T) {
	input, err := testpki.ExpandTemplate("edge", edgeCases)
	require.NoError(t, err)
	out, handled, err := viaFastPath(t, input)
	require.NoError(t, err)
	require.True(t, handled)
	require.Contains(t, string(out), "    name: plain # kept as is\n  spec: {a: 1, b: [x, \"y\"]}\n")
	require.Contains(t, string(out), "rotate-certs.dev/bundle-hash")
}

// TestResultsEncodeLikeKyaml: the direct results writer gives the same
// results as kyaml's marshalling, for every shape a result can take.
func TestResultsEncodeLikeKyaml(t *testing.T) {
	results := framework.Results{
		{Message: "plain", Severity: framework.Info},
		{Message: "quotes \" and 'single', colon: x, #hash, unicode é ✓, tab\tnewline\nend", Severity: framework.Warning,
			ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: "v1", Kind: "Secret"}, NameMeta: yaml.NameMeta{Name: "s", Namespace: "ns"}},
			Field:       &framework.Field{Path: "data.ca.crt"}, File: &framework.File{Path: "dir/a.yaml", Index: 2}},
		{Message: "file at index 0", Severity: framework.Error, File: &framework.File{Path: "a.yaml"}},
		{Message: "tags", Tags: map[string]string{"b": "2", "a": "yes"}},
		{Message: "values", Field: &framework.Field{Path: "spec.x", CurrentValue: 3, ProposedValue: []string{"a"}}},
		{Message: "true"}, {Message: "123"}, {Message: "null"}, {Message: "- dash"}, {Message: "1e3"}, {Message: "0x1F"},
		{Message: "Yes"}, {Message: "a #b"}, {Message: "a: b"}, {Message: " lead"}, {Message: "2026-11-22"}, {Message: "v1 (ok), 7/8"},
		{ResourceRef: &yaml.ResourceIdentifier{NameMeta: yaml.NameMeta{Name: "only-ref"}}},
		// Found by FuzzFastPathMatchesKyaml: an empty reference is {}.
		{ResourceRef: &yaml.ResourceIdentifier{}},
		{Message: "empty ref after a message", ResourceRef: &yaml.ResourceIdentifier{}, Field: &framework.Field{Path: "kind"}},
	}
	results = append(results,
		&framework.Result{Message: "multi\nline\n", Severity: framework.Info},
		&framework.Result{Message: "tab\there", Field: &framework.Field{}, File: &framework.File{}},
		&framework.Result{Message: "no ", Severity: "yes"},
		&framework.Result{Message: "-x", ResourceRef: &yaml.ResourceIdentifier{NameMeta: yaml.NameMeta{Name: "0777", Namespace: "1_000"}}},
		&framework.Result{Message: ": a", Field: &framework.Field{Path: "a: b"}},
		&framework.Result{Message: "? x", File: &framework.File{Path: "#a", Index: 7}},
		&framework.Result{Message: "x #y 'q' \"dq\" \\ back", Severity: "~"},
		&framework.Result{Message: "--- doc", Severity: "..."},
		&framework.Result{Message: "café ✓ 🔐 \u00a0nbsp", Severity: ".5"},
		&framework.Result{Message: "trailing:", Severity: "1:20"},
		&framework.Result{Message: "<a>", Severity: "2026-11-22T00:00:00Z"},
	)
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	require.NoError(t, resio.WriteResultsForTest(w, results))
	require.NoError(t, w.Flush())
	// Byte for byte what framework.Execute writes: marshalled, parsed, and
	// encoded as the list's results.
	marshalled, err := yaml.Marshal(results)
	require.NoError(t, err)
	parsed, err := yaml.Parse(string(marshalled))
	require.NoError(t, err)
	list := yaml.NewMapRNode(nil)
	require.NoError(t, list.PipeE(yaml.SetField("results", parsed)))
	require.Equal(t, list.MustString(), buf.String())

	got, err := yaml.Parse(buf.String())
	require.NoError(t, err, buf.String())
	want, err := yaml.Marshal(results)
	require.NoError(t, err)
	var gotResults, wantResults framework.Results
	require.NoError(t, yaml.Unmarshal([]byte(got.Field("results").Value.MustString()), &gotResults))
	require.NoError(t, yaml.Unmarshal(want, &wantResults))
	require.Equal(t, wantResults, gotResults)

	// Every scalar written for a string must resolve as a string, not as a
	// bool, number or null (which decoding into Go strings would hide).
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(buf.Bytes(), &doc))
	var walk func(n *yaml.Node, key string)
	walk = func(n *yaml.Node, key string) {
		if n.Kind == yaml.ScalarNode && key != "index" && key != "currentValue" {
			require.Equal(t, "!!str", n.ShortTag(), "%s: %q", key, n.Value)
		}
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				continue
			}
			k := key
			if n.Kind == yaml.MappingNode {
				k = n.Content[i-1].Value
			}
			walk(c, k)
		}
	}
	walk(&doc, "")
}

// TestFastPathTakesItsOwnOutput: a re-render feeds the previous output,
// results included, back in; it must stay on the fast path and match kyaml.
func TestFastPathTakesItsOwnOutput(t *testing.T) {
	first, handled, err := viaFastPath(t, synth.ResourceList(synth.Options{Resources: 300, Bundles: 5, Seed: 9}))
	require.NoError(t, err)
	require.True(t, handled)
	require.Contains(t, string(first), "\nresults:\n- ")
	requireEquivalent(t, first, true)
}

// TestUnparsedItemsSurviveWhenNothingIsParsed: when every item is one the
// function does not need (none is parsed, so the function returns no
// items), the items still pass through; on a failed run none do.
func TestUnparsedItemsSurviveWhenNothingIsParsed(t *testing.T) {
	const widgets = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
- apiVersion: example.com/v1
  kind: Gadget
  metadata: {name: b}
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata:
    name: p
  spec:
`
	tests := map[string]struct {
		spec      string
		wantItems int
	}{
		"valid policy keeps every item":  {spec: "    clusterAPI:\n      certificatesExpiryDays: 21\n", wantItems: 2},
		"invalid policy outputs no item": {spec: "    clusterAPI:\n      certificatesExpiryDays: 3\n", wantItems: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			input := []byte(widgets + tc.spec)
			requireEquivalent(t, input, true)
			got, _, _ := viaFastPath(t, input)
			require.Len(t, itemNames(t, got), tc.wantItems)
		})
	}
}

// TestOrchestratorListsAreByteIdentical: on the lists kpt and kustomize
// send (every item annotated with its file, index and ids), the fast path
// writes exactly the bytes kyaml's reader and writer write, on the first
// render and on its re-render.
func TestOrchestratorListsAreByteIdentical(t *testing.T) {
	for _, shape := range synth.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			input := synth.ResourceList(synth.Options{Resources: 600, Bundles: 10, Seed: 4, Shape: shape})
			for _, round := range []string{"first", "re-render"} {
				want, wantErr := viaKyaml(t, input)
				require.NoError(t, wantErr)
				got, handled, err := viaFastPath(t, input)
				require.True(t, handled)
				require.NoError(t, err)
				require.Equal(t, string(want), string(got), "%s render", round)
				input = got
			}
		})
	}
}

// annotationCases are items whose path, index and id annotations kyaml's
// bookkeeping treats in every way it can: both forms, one form, forms that
// differ, the migration id alone or beside others, comments among them,
// empty or null annotations and metadata.
var annotationCases = map[string]string{
	"both forms": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'a.yaml'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'a.yaml'
      internal.config.kubernetes.io/annotations-migration-resource-id: '0'
`,
	"legacy only": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
    annotations:
      config.kubernetes.io/path: a.yaml
`,
	"internal only": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
    annotations:
      internal.config.kubernetes.io/path: "a.yaml"
      internal.config.kubernetes.io/index: '3'
`,
	"forms differ": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
    annotations:
      config.kubernetes.io/path: a.yaml
      internal.config.kubernetes.io/path: b.yaml
`,
	"one pair incomplete": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
    annotations:
      config.kubernetes.io/path: a.yaml
      internal.config.kubernetes.io/path: a.yaml
      config.kubernetes.io/index: '1'
`,
	"migration id alone": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
    annotations:
      internal.config.kubernetes.io/annotations-migration-resource-id: '7'
`,
	"migration id and a comment": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
    annotations:
      x: y
      # about the id
      internal.config.kubernetes.io/annotations-migration-resource-id: '7'
`,
	"migration id in flow": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
    annotations: {x: y, internal.config.kubernetes.io/annotations-migration-resource-id: '7'}
`,
	"migration id over lines": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
    annotations:
      x: y
      internal.config.kubernetes.io/annotations-migration-resource-id: |
        7
`,
	"empty annotations": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
    annotations: {}
`,
	"null annotations": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
    name: a
    annotations:
  spec: {}
`,
	"null metadata": `- apiVersion: example.com/v1
  kind: Widget
  metadata:
  spec: {x: 1}
`,
	"empty metadata": `- apiVersion: example.com/v1
  kind: Widget
  metadata: {}
`,
	"no kind": `- apiVersion: example.com/v1
  metadata:
    name: a
- {}
- apiVersion: v1
`,
	"kustomize id block": `- apiVersion: v1
  kind: Secret
  metadata:
    annotations:
      kustomize.config.k8s.io/id: |
        kind: Secret
        name: ca
        version: v1
      config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/annotations-migration-resource-id: '0'
    name: ca
    namespace: gw
`,
}

// TestAnnotationBookkeepingMatchesKyaml runs every annotation case alone,
// beside an item with both forms, and beside one with the legacy form only
// (kyaml refuses a list whose items use different forms).
func TestAnnotationBookkeepingMatchesKyaml(t *testing.T) {
	neighbours := map[string]string{
		"alone": "",
		"beside both forms": `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: n
    annotations:
      config.kubernetes.io/path: 'n.yaml'
      internal.config.kubernetes.io/path: 'n.yaml'
`,
		"beside legacy": `- apiVersion: example.com/v1
  kind: Gadget
  metadata:
    name: n
    annotations:
      config.kubernetes.io/path: n.yaml
`,
	}
	for name, item := range annotationCases {
		for nname, neighbour := range neighbours {
			t.Run(name+"/"+nname, func(t *testing.T) {
				requireEquivalent(t, multiLineList(item+neighbour), true)
				requireEquivalent(t, multiLineList(neighbour+item), true)
			})
		}
	}
}

// damagedCases are items kyaml's reader changes (metadata, labels or
// annotations not mappings, a key defined twice): the fast path refuses one
// the function reads and copies one it does not as written. Each goes after
// a plain ConfigMap (damagedList).
var damagedCases = map[string]string{
	"metadata a list":               "- apiVersion: example.com/v1\n  kind: Widget\n  metadata: [a, b]\n  spec: {x: 1} # kept\n",
	"labels a list":                 "- apiVersion: example.com/v1\n  kind: Widget\n  metadata:\n    name: w\n    labels: [a]\n",
	"metadata twice":                "- apiVersion: example.com/v1\n  kind: Widget\n  metadata:\n    name: w\n  metadata:\n    name: v\n",
	"annotations a number":          "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n    annotations: 0\n",
	"metadata twice in a read kind": "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  metadata:\n    name: d\n",
	// Found by FuzzFastPathMatchesKyaml: no space after the colon, so
	// annotations is a string, which names a synced annotation; kyaml's
	// bookkeeping replaced it with a mapping before the function saw it.
	"annotations a string naming the path": "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: trust\n    annotations:\n" +
		"      internal.config.kubernetes.io/path:y's files/trust.yaml\n  type: Opaque\n",
	"an unread kind's annotations a string naming the path": "- apiVersion: example.com/v1\n  kind: Widget\n  metadata:\n    name: w\n" +
		"    annotations:\n      config.kubernetes.io/path:w.yaml\n  spec: {x: 1}\n",
	"annotations a string naming the migration id": "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: trust\n" +
		"    annotations: 'internal.config.kubernetes.io/annotations-migration-resource-id: 0'\n",
	"metadata a string naming the path": "- apiVersion: example.com/v1\n  kind: Widget\n  metadata: internal.config.kubernetes.io/path\n",
}

// damagedList is a ResourceList of a plain ConfigMap and item.
func damagedList(item string) []byte {
	return multiLineList("- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: first\n" + item)
}

// TestDamagedItemsAreRefusedOrCopied: the fast path refuses a damaged item
// naming it, or copies it as written; it never hands it to kyaml's
// annotation bookkeeping, which rewrites it (or fails naming no item)
// before the function could refuse it.
func TestDamagedItemsAreRefusedOrCopied(t *testing.T) {
	for name, item := range damagedCases {
		t.Run(name, func(t *testing.T) {
			input := damagedList(item)
			_, kyamlErr := viaKyaml(t, input)
			got, handled, err := viaFastPath(t, input)
			require.True(t, handled, "the fast path takes the list")
			if err != nil {
				require.ErrorContains(t, err, "items[1]", "a refusal names the damaged item")
			}
			requireRefusedOrCopied(t, input, got, err, kyamlErr)
		})
	}
}

// TestFunctionSeesOnlyWhatItReads: of the core Secrets and ConfigMaps, the
// function is handed only the ones a step reads (rotate.Needs): sources
// and targets by name, and values the certificate inventory scans; the rest
// pass through as text, on an output equal to kyaml's.
func TestFunctionSeesOnlyWhatItReads(t *testing.T) {
	input := synth.ResourceList(synth.Options{Resources: 120, Bundles: 2, Seed: 8, Shape: synth.Kustomize})
	var kinds []string
	fn := func(fc *yaml.RNode, items []*yaml.RNode, positions []int) ([]*yaml.RNode, framework.Results, error) {
		for _, it := range items {
			kinds = append(kinds, it.GetKind())
		}
		return processor.Run(fc, items, positions)
	}
	var out bytes.Buffer
	handled, err := resio.RunFast(input, &out, rotate.Needs, fn)
	require.True(t, handled)
	require.NoError(t, err)
	require.NotContains(t, kinds, "ConfigMap", "no ConfigMap of the list holds a certificate or is a source or target")
	require.NotContains(t, kinds, "Widget")
	require.Contains(t, kinds, "Secret")
	require.Contains(t, kinds, "Deployment")
	want, err := viaKyaml(t, input)
	require.NoError(t, err)
	require.Equal(t, string(want), out.String())
}

// TestParseBudget: a list whose read items hold far more YAML nodes than
// its size allows for (here one Deployment of three-byte flow entries) is
// refused with an error that says so, before it is all parsed, and nothing
// is written.
func TestParseBudget(t *testing.T) {
	var flowMap strings.Builder
	flowMap.WriteString("{")
	for i := 0; flowMap.Len() < 3<<20; i++ {
		fmt.Fprintf(&flowMap, "k%d: 1, ", i)
	}
	flowMap.WriteString("z: 1}")
	input := multiLineList("- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: wide\n  spec: " + flowMap.String() + "\n")
	var out bytes.Buffer
	called := false
	fn := func(fc *yaml.RNode, items []*yaml.RNode, positions []int) ([]*yaml.RNode, framework.Results, error) {
		called = true
		return items, nil, nil
	}
	handled, err := resio.RunFast(input, &out, rotate.Needs, fn)
	require.True(t, handled)
	var tooMuch *resio.TooMuchYAMLError
	require.ErrorAs(t, err, &tooMuch)
	require.Contains(t, err.Error(), "items[0]")
	require.False(t, called)
	require.Zero(t, out.Len())

	// The same list with its entries ten times longer is read.
	input = bytes.ReplaceAll(input, []byte(": 1, "), []byte(": 1000000000000000000000000000000, "))
	handled, err = resio.RunFast(input, &out, rotate.Needs, fn)
	require.True(t, handled)
	require.NoError(t, err)
}
