package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestRenderKeepsTheTextOfChangedResources: a workload that gets a
// trust-hash annotation keeps the text of everything else in it, as the
// user wrote it - comments after values and above keys, flow collections,
// a flow sequence over two lines, an indented sequence, a leading "---" -
// and the render is what encoding the resource whole would give, once
// parsed: the input's fields plus the annotation. A second render changes
// nothing.
func TestRenderKeepsTheTextOfChangedResources(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(golden.Path("testdata", "render", "keeps-formatting"))))
	input, err := os.ReadFile(filepath.Join(dir, "workloads.yaml"))
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	log := exit.NewPrinter(&stderr, "rotate-certs render")
	require.NoError(t, Render(dir, Options{PolicyFile: filepath.Join(dir, "rotation-policy.yaml"), Stdout: &stdout, Stderr: log}), stderr.String())
	output, err := os.ReadFile(filepath.Join(dir, "workloads.yaml"))
	require.NoError(t, err)

	// Text: the input's lines, in order, with only annotation lines added.
	added := addedLines(strings.SplitAfter(string(input), "\n"), strings.SplitAfter(string(output), "\n"))
	require.Len(t, added, 5, "three trust-hash lines and two annotations: keys:\n%s", output)
	for _, l := range added {
		trimmed := strings.TrimSpace(l)
		require.True(t, trimmed == "annotations:" || strings.HasPrefix(trimmed, "rotate-certs.dev/trust-hash: 'sha256:"), "added line %q", l)
	}

	// Meaning: each output resource is the input's plus its annotation.
	before, after := readDocs(t, input), readDocs(t, output)
	require.Len(t, after, len(before))
	for i := range after {
		tmpl := after[i].Field("spec").Value.Field("template").Value
		require.NotEmpty(t, tmpl.GetAnnotations()["rotate-certs.dev/trust-hash"], "resource %d rolled", i)
		_, err := tmpl.Pipe(yaml.ClearAnnotation("rotate-certs.dev/trust-hash"))
		require.NoError(t, err)
		require.NoError(t, yaml.ClearEmptyAnnotations(tmpl))
		require.Equal(t, golden.Encode(t, before[i:i+1]), golden.Encode(t, after[i:i+1]))
	}

	stdout.Reset()
	require.NoError(t, Render(dir, Options{PolicyFile: filepath.Join(dir, "rotation-policy.yaml"), Stdout: &stdout, Stderr: log}))
	require.Empty(t, stdout.String(), "a second render writes nothing")
	again, err := os.ReadFile(filepath.Join(dir, "workloads.yaml"))
	require.NoError(t, err)
	require.Equal(t, string(output), string(again))
}

// addedLines returns the lines of after that are not matched, in order,
// by the lines of before; it fails the caller's assertions (by returning
// nil) when before is not a subsequence of after.
func addedLines(before, after []string) []string {
	var added []string
	i := 0
	for _, l := range after {
		if i < len(before) && l == before[i] {
			i++
			continue
		}
		added = append(added, l)
	}
	if i != len(before) {
		return nil
	}
	return added
}

func readDocs(t *testing.T, b []byte) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
	require.NoError(t, err)
	return nodes
}
