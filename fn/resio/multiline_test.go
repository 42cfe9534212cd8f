package resio_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// multiLineList wraps items (at column 0, "- " per item) in a
// ResourceList with a valid policy.
func multiLineList(items string) []byte {
	return []byte(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
` + items + `functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata:
    name: p
  spec:
    clusterAPI:
      certificatesExpiryDays: 21
`)
}

// itemNames reads a ResourceList with kyaml's reader and returns the
// names of its items.
func itemNames(t *testing.T, out []byte) []string {
	t.Helper()
	_, items := readList(t, out)
	var names []string
	for _, it := range items {
		names = append(names, it.GetName())
	}
	return names
}

// TestMultiLineScalarsNeverHideItems: a quoted scalar or flow collection
// may continue over lines that, read line by line, look like a top-level
// "results:" key or a new item. The fast path must not cut there (it once
// dropped every item after such a line, and wrote broken YAML): it falls
// back to kyaml, which reads the scalar as one value.
func TestMultiLineScalarsNeverHideItems(t *testing.T) {
	tests := map[string]string{
		"double-quoted scalar hides results:": "- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: a\n  spec:\n    note: \"first\nresults: hidden\"\n",
		"single-quoted scalar hides an item":  "- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: a\n    note: 'x\n- y'\n",
		"escaped quote does not close":        "- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: a\n  note: \"a \\\" b\nresults: c\"\n",
		"doubled single quote does not close": "- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: a\n  note: 'it''s\nresults: c'\n",
		"flow mapping over lines":             "- apiVersion: example.com/v1\n  kind: Foo\n  metadata: {name: a,\nresults: x}\n",
		"flow sequence over lines":            "- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: a\n  list: [x,\n- y]\n",
		"quoted key then open value":          "- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: a\n  \"k\": \"open\nresults: x\"\n",
		"open quote in a sequence entry":      "- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: a\n  list:\n  - \"open\nresults: x\"\n",
		"tagged open quote":                   "- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: a\n  note: !!str \"open\nresults: x\"\n",
		"anchored open flow":                  "- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: a\n  note: &n [x,\n- y]\n",
	}
	tail := "- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: b\n"
	for name, items := range tests {
		t.Run(name, func(t *testing.T) {
			input := multiLineList(items + tail)
			want, wantErr := viaKyaml(t, input)
			got, handled, gotErr := viaFastPath(t, input)
			require.False(t, handled, "a scalar open at the end of a line must send the list to kyaml")
			require.Nil(t, got)
			require.ErrorIs(t, gotErr, resio.ErrNotCanonical)
			if wantErr == nil {
				require.Equal(t, []string{"a", "b"}, itemNames(t, want), "kyaml reads both items")
			}
		})
	}
}

// TestClosedScalarsStayOnTheFastPath: quotes and brackets that close on
// their line, apostrophes inside plain words, and anything inside a block
// scalar (JSON documents, scripts) are not open scalars; such lists keep
// the fast path and match kyaml.
func TestClosedScalarsStayOnTheFastPath(t *testing.T) {
	items := strings.Join([]string{
		"- apiVersion: example.com/v1",
		"  kind: Foo",
		"  metadata:",
		"    name: a",
		"    annotations:",
		"      note: it's fine, really",
		"      quoted: \"a 'b' \\\" c\" # comment with \" and '",
		"      single: 'it''s # not a comment'",
		"      hash: a#b 'c",
		"  spec:",
		"    flow: {a: [1, 2], b: \"}\", c: '['}",
		"    seq: [\"x\", 'y', {z: 1}]",
		"    - not: an item",
		"    json: |",
		"      {",
		"        \"a\": [",
		"          1",
		"        ],",
		"        \"b\": \"it's",
		"      }",
		"    tagged: !!str |",
		"      {\"open\": [",
		"    anchored: &x \"closed\"",
		"    script: >-",
		"      echo \"unclosed",
		"      echo '",
		"    list:",
		"    - \"closed\"",
		"    - [a, b]",
		"    - |",
		"      [section",
		"      key = \"v",
		"- apiVersion: example.com/v1",
		"  kind: Foo",
		"  metadata:",
		"    name: b",
		"",
	}, "\n")
	items = strings.Replace(items, "    - not: an item\n", "", 1)
	requireEquivalent(t, multiLineList(items), true)
}

// TestTypeWrittenUnusuallyIsParsed: an item whose apiVersion or kind is
// not a plain word on its line (a comment after it, quotes) is parsed and
// judged by its parsed type, not by its text: a function that needs
// Secrets sees every Secret however it is written.
func TestTypeWrittenUnusuallyIsParsed(t *testing.T) {
	tests := map[string]string{
		"plain":                 "- apiVersion: v1\n  kind: Secret\n",
		"comment after kind":    "- apiVersion: v1\n  kind: Secret # the gateway CA\n",
		"quoted kind":           "- apiVersion: v1\n  kind: \"Secret\"\n",
		"comment after version": "- kind: Secret\n  apiVersion: v1 # core\n",
		"kind written twice":    "- apiVersion: v1\n  kind: Secret\n  kind: Widget\n", // the first counts, as in kyaml
	}
	onlySecrets := func(*yaml.RNode) resio.Selection {
		return resio.Selection{Kind: func(apiVersion, kind string) bool { return apiVersion == "v1" && kind == "Secret" }}
	}
	for name, head := range tests {
		t.Run(name, func(t *testing.T) {
			input := []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + head + "  metadata:\n    name: ca\n")
			var seen int
			fn := func(_ *yaml.RNode, items []*yaml.RNode, _ []int) ([]*yaml.RNode, framework.Results, error) {
				seen = len(items)
				return items, nil, nil
			}
			var out bytes.Buffer
			handled, err := resio.RunFast(input, &out, onlySecrets, fn)
			if !handled {
				return // kyaml reads it (a duplicate key is its error to report)
			}
			require.NoError(t, err)
			require.Equal(t, 1, seen, "the function must see the Secret")
		})
	}
}

// TestUnreadableTextGoesToKyaml: bytes YAML's reader refuses (control
// characters, DEL, C1 controls, invalid UTF-8) in an item the function
// does not need would otherwise be copied through unread; the list goes to
// kyaml, which refuses it with the offending byte named. So do the line
// breaks YAML knows besides LF (NEL, LS, PS), which would split a line
// where the fast path does not. Other non-ASCII text stays on the fast
// path.
func TestUnreadableTextGoesToKyaml(t *testing.T) {
	tests := map[string]struct {
		value    string
		wantFast bool
		readable bool // kyaml reads it
	}{
		"ascii":           {value: "plain", wantFast: true, readable: true},
		"accents, emoji":  {value: "café ✓ 🔐", wantFast: true, readable: true},
		"NEL":             {value: "a\u0085b"},
		"line separator":  {value: "a: \u2028b", readable: true},
		"NUL":             {value: "a\x00b"},
		"bell":            {value: "a\x07b"},
		"DEL":             {value: "a\x7fb"},
		"C1 control":      {value: "a\u0090b"},
		"invalid UTF-8":   {value: "a\xffb"},
		"truncated UTF-8": {value: "a\xe2\x9cb"},
		"U+FFFE":          {value: "a\ufffeb"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			input := multiLineList("- apiVersion: example.com/v1\n  kind: Foo\n  metadata:\n    name: a\n  spec:\n    note: " + tc.value + "\n")
			_, wantErr := viaKyaml(t, input)
			out, handled, err := viaFastPath(t, input)
			require.Equal(t, tc.wantFast, handled)
			if tc.wantFast {
				require.NoError(t, wantErr)
				require.NoError(t, err)
				require.Contains(t, string(out), tc.value, "copied through as written")
				return
			}
			if !tc.readable {
				require.Error(t, wantErr, "kyaml refuses it")
			}
		})
	}
}

// TestPositionsCountUnparsedItems: a message that names an item by its
// position names the same item on both paths, although the fast path hands
// the function only the items it parsed.
func TestPositionsCountUnparsedItems(t *testing.T) {
	widget := "- apiVersion: example.com/v1\n  kind: Widget\n  metadata:\n    name: w\n"
	trust := "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: trust\n    namespace: gw\n"
	src := strings.Replace(edgeCases, "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: kpt-style\n",
		widget+trust+widget+trust+"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: kpt-style\n", 1)
	require.NotEqual(t, edgeCases, src)
	input, err := testpki.ExpandTemplate("edge", src)
	require.NoError(t, err)
	requireEquivalent(t, input, true)
	_, _, err = viaFastPath(t, input)
	require.ErrorContains(t, err, "items[5], items[7]", "the duplicate copies by their place in the list")

	bad := multiLineList(widget + "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\n    annotations: 0\n")
	_, _, err = viaFastPath(t, bad)
	require.ErrorContains(t, err, "items[1] (ConfigMap b)")
}
