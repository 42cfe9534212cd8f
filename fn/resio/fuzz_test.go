package resio_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/internal/synth"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// FuzzFastPathMatchesKyaml is differential fuzzing of function mode's
// reader and writer: whatever the input, the fast path either declines it
// (having written nothing) or produces what kyaml's reader, the processor
// and kyaml's writer produce, failure included. Seeds: every golden input,
// the edge cases above, a synthetic list in each shape kpt and kustomize
// send it in, the annotation cases (annotationCases), and
// testdata/fuzz/FuzzFastPathMatchesKyaml.
func FuzzFastPathMatchesKyaml(f *testing.F) {
	for _, seed := range fastPathSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		want, wantErr := viaKyaml(t, input)
		got, handled, gotErr := viaFastPath(t, input)
		if !handled {
			return
		}
		if hasMisshapenItem(input) || readerDropsDuplicateKeys(input) {
			// kyaml's reader replaces a metadata, labels or annotations
			// value that is not a mapping, dropping what it held, and its
			// annotation bookkeeping removes a metadata key left empty,
			// which can be one of two metadata keys of an item (both found
			// by this fuzzer): no comparison with kyaml. The fast path
			// refuses such an item when it parses it
			// (TestPositionsCountUnparsedItems, the duplicate-key rule)
			// and copies it as written when it does not: it never drops it.
			requireRefusedOrCopied(t, input, got, gotErr, wantErr)
			return
		}
		if wantErr != nil && gotErr == nil && strings.Contains(wantErr.Error(), "failed to read ResourceList input") {
			// kyaml's reader refuses YAML the fast path never parsed: an
			// item no step reads (no kind, or one no step reads) passes
			// through as written, defects included (found by this fuzzer;
			// docs/design/fast-path.md). An item it parses goes to kyaml when
			// it does not parse.
			return
		}
		require.Equal(t, wantErr != nil, gotErr != nil, "both paths must agree on failure: kyaml %v, fast %v", wantErr, gotErr)
		if len(want) == 0 {
			return // kyaml could not read the input at all
		}
		w, g := normalized(t, want), normalized(t, got)
		if keepsDroppedComments(w, g) {
			// kyaml's writer drops some comments of an item it does not
			// change (one after a null value at the end of a mapping, found
			// by this fuzzer); the fast path copies such an item as written.
			return
		}
		require.Equal(t, w, g)
	})
}

// fastPathSeeds are FuzzFastPathMatchesKyaml's seeds: the golden inputs,
// edge cases, the lists kpt and kustomize send (every item annotated with
// its file, index and ids, which kyaml's bookkeeping keeps in sync),
// scalars over lines, damaged items, and items that are not mappings.
func fastPathSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	inputs, err := filepath.Glob("../../testdata/golden/*/input.yaml")
	require.NoError(tb, err)
	for _, p := range inputs {
		text, err := os.ReadFile(p)
		require.NoError(tb, err)
		input, err := testpki.ExpandTemplate(p, string(text))
		require.NoError(tb, err)
		seeds = append(seeds, input)
	}
	edge, err := testpki.ExpandTemplate("edge", edgeCases)
	require.NoError(tb, err)
	seeds = append(seeds, edge)
	// The lists kpt and kustomize send: every item annotated with its
	// file, index and ids, which kyaml's bookkeeping keeps in sync.
	for _, shape := range synth.Shapes {
		seeds = append(seeds, synth.ResourceList(synth.Options{Resources: 12, Bundles: 2, Seed: 3, Shape: shape}))
	}
	for _, item := range annotationCases {
		seeds = append(seeds, multiLineList(item))
	}
	// Quoted, flow and block scalars over lines, tags and anchors (the
	// splitter's open-scalar rule).
	seeds = append(seeds, multiLineList("- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: a\n  note: !!str \"x\n- y\"\n  flow: {a: [1,\n    2]}\n  json: |\n    {\"a\": [\n    ]}\n"))
	seeds = append(seeds, multiLineList("- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n  data:\n    k: 'it''s'\n    j: \"a \\\" b\"\n# between\n- apiVersion: example.com/v1\n  kind: Foo\n  metadata: {name: c}\n"))
	for _, item := range damagedCases {
		seeds = append(seeds, damagedList(item))
	}
	// Items that are not mappings, each written on the entry's line.
	for _, item := range []string{"- -\n", "- - a\n", "- \"x\"\n", "- 'x'\n", "- [a, b]\n", "- plain\n", "- |\n  text\n",
		"- >\n  text\n", "- &a\n  k: v\n", "- !!map\n  k: v\n", "- *a\n", "- ~\n", "- null\n", "- 0\n", "- ? k\n  : v\n"} {
		seeds = append(seeds, []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata:\n    name: p\nitems:\n"+item))
	}
	return seeds
}

// requireRefusedOrCopied fails unless the fast path, given input with
// items kyaml's reader would change (damaged: metadata, labels or
// annotations not mappings, or a key defined twice), either failed naming
// one of them by its place in the list, or wrote every one of them as
// written - unless kyaml's path failed too.
func requireRefusedOrCopied(t *testing.T, input, got []byte, err, kyamlErr error) {
	t.Helper()
	if err != nil && kyamlErr != nil {
		// Both paths refuse the list, each naming a real problem: the
		// same one for a reason of the whole list (no functionConfig), or
		// another when the list has two (kyaml's reader names the damaged
		// item first, the fast path a functionConfig that is no policy;
		// both found by this fuzzer). Nothing is written either way.
		return
	}
	items, texts := rawItems(input), itemTexts(input)
	require.Len(t, texts, len(items), "the input's items")
	var damaged []int
	for i, it := range items {
		if it.Kind == yaml.MappingNode && (kube.CheckShape(yaml.NewRNode(it), "") != nil || len(kube.DuplicateKeysOf(yaml.NewRNode(it))) > 0) {
			damaged = append(damaged, i)
		}
	}
	require.NotEmpty(t, damaged, "no damaged item in an input said to hold one")
	if err != nil {
		for _, i := range damaged {
			if strings.Contains(err.Error(), fmt.Sprintf("items[%d]", i)) {
				return
			}
		}
		t.Fatalf("the fast path failed without naming a damaged item (items %v): %v", damaged, err)
	}
	for _, i := range damaged {
		require.Contains(t, string(got), texts[i], "items[%d] is damaged and the fast path did not refuse it: it must be copied as written", i)
	}
}

// itemTexts returns the text of each item of a ResourceList, from its
// entry's line to the line before the next entry (or the key after items),
// comment and blank lines at its end left off; nil when input is not a
// ResourceList.
func itemTexts(input []byte) []string {
	doc, err := yaml.Parse(string(input))
	if err != nil || doc.YNode().Kind != yaml.MappingNode {
		return nil
	}
	lines := strings.SplitAfter(string(input), "\n")
	top := doc.YNode().Content
	var items []*yaml.Node
	end := len(lines) + 1 // the line after the items, from 1
	for i := 0; i+1 < len(top); i += 2 {
		switch {
		case top[i].Value == "items" && top[i+1].Kind == yaml.SequenceNode:
			items = top[i+1].Content
		case items != nil && top[i].Line > items[len(items)-1].Line && top[i].Line < end:
			end = top[i].Line
		}
	}
	var out []string
	for i, it := range items {
		next := end
		if i+1 < len(items) {
			next = items[i+1].Line
		}
		body := lines[it.Line-1 : next-1]
		for len(body) > 1 && (strings.TrimSpace(body[len(body)-1]) == "" || strings.HasPrefix(strings.TrimSpace(body[len(body)-1]), "#")) {
			body = body[:len(body)-1]
		}
		out = append(out, strings.Join(body, ""))
	}
	return out
}

// keepsDroppedComments reports whether fast is kyaml's output with comment
// lines added and nothing else: item by item, kyaml's lines are a
// subsequence of the fast path's, and every other line is a comment.
func keepsDroppedComments(kyaml, fast []string) bool {
	if len(kyaml) != len(fast) {
		return false
	}
	for i := range kyaml {
		want, got := strings.Split(kyaml[i], "\n"), strings.Split(fast[i], "\n")
		j := 0
		for _, line := range got {
			if j < len(want) && line == want[j] {
				j++
				continue
			}
			if !strings.HasPrefix(strings.TrimSpace(line), "#") {
				return false
			}
		}
		if j != len(want) {
			return false
		}
	}
	return true
}

// readerDropsDuplicateKeys reports whether kyaml's reader and its
// annotation bookkeeping (what framework.Execute does before the function
// runs) leave some item with fewer duplicate mapping keys than it was
// written with.
func readerDropsDuplicateKeys(input []byte) bool {
	raw := rawItems(input)
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input), KeepReaderAnnotations: true}
	read, err := rw.Read()
	if err != nil || len(read) != len(raw) {
		return false
	}
	if _, err := kio.PreprocessResourcesForInternalAnnotationMigration(read); err != nil {
		return false
	}
	for i := range raw {
		if len(kube.DuplicateKeysOf(read[i])) < len(kube.DuplicateKeysOf(yaml.NewRNode(raw[i]))) {
			return true
		}
	}
	return false
}

// rawItems returns the items of a ResourceList as parsed, nil when input
// is not one.
func rawItems(input []byte) []*yaml.Node {
	doc, err := yaml.Parse(string(input))
	if err != nil || doc.YNode().Kind != yaml.MappingNode {
		return nil
	}
	items := doc.Field("items")
	if items == nil || items.Value.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	return items.Value.Content()
}

// hasMisshapenItem reports whether input parses and holds an item whose
// metadata, labels or annotations are not mappings.
func hasMisshapenItem(input []byte) bool {
	for _, it := range rawItems(input) {
		if it.Kind == yaml.MappingNode && kube.CheckShape(yaml.NewRNode(it), "") != nil {
			return true
		}
	}
	return false
}
