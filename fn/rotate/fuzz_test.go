package rotate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/krmio"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/rotate-certs/rotate-certs/internal/synth"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// executeStderr runs the function as function mode does
// (cmd/rotate-certs runFunction): the krmio fast path for canonical
// ResourceLists, kyaml's reader and writer for anything else, with the
// processor's stderr summary captured.
func executeStderr(input []byte) (output, stderr []byte, err error) {
	var out, errOut bytes.Buffer
	p := rotate.Processor{Now: func() time.Time { return testpki.GoldenNow }, Stderr: &errOut}
	handled, err := krmio.Run(input, &out, rotate.Needs, p.RunAt)
	if !handled {
		err = p.ExecuteKyaml(input, &out)
	}
	// runFunction prints the error with kyaml's echo of a refused node cut.
	return out.Bytes(), errOut.Bytes(), kube.ScrubError(err)
}

// FuzzProcess feeds arbitrary ResourceLists to the whole function in
// function mode, as kustomize and kpt call it. It must not panic; a failed render outputs no
// resources; a successful one is deterministic and idempotent; no result
// and nothing on stderr carries key material; and no CA outside the
// sources, the targets' data and the memory of Copy-mode renders ever
// appears in the output (annotations never add trust). Seeds: every golden
// input (the integrity-* cases forge each memory annotation), targets
// with forged annotations, a small synthetic list, and
// testdata/fuzz/FuzzProcess.
func FuzzProcess(f *testing.F) {
	inputs, err := filepath.Glob(filepath.Join(goldenDir, "*", "input.yaml"))
	require.NoError(f, err)
	require.NotEmpty(f, inputs)
	for _, path := range inputs {
		text, err := os.ReadFile(path)
		require.NoError(f, err)
		in, err := testpki.ExpandTemplate(path, string(text))
		require.NoError(f, err)
		f.Add(in)
	}
	f.Add(synth.ResourceList(synth.Options{Resources: 12, Bundles: 2, Seed: 1}))
	for _, seed := range forgedMemorySeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		out, stderr, err := executeStderr(input)
		noKeyMaterial(t, string(stderr), "stderr")
		if err != nil {
			noKeyMaterial(t, err.Error(), "the error")
			if len(out) > 0 {
				require.Empty(t, parseResourceList(t, out).items, "a failed render must output no resources")
			}
			return
		}
		if !readable(out) {
			// An item no step reads passes through as written, a syntax
			// error included (docs: the fast path never parses it; kpt and
			// kustomize parse every resource before a function sees it).
			// Then the defect came with the input: kyaml's reader refuses
			// the input too.
			require.False(t, readable(input), "the function wrote YAML that does not parse from input that does:\n%s", out)
			return
		}
		rl := parseResourceList(t, out)
		noKeyMaterial(t, rl.results, "results")
		requireNoForeignCA(t, input, out)

		again, _, err := executeStderr(input)
		require.NoError(t, err)
		require.Equal(t, string(out), string(again), "same input, same output")

		second, _, err := executeStderr(out)
		require.NoError(t, err, "re-rendering a successful output must succeed")
		require.Equal(t, itemTexts(t, rl.items), itemTexts(t, parseResourceList(t, second).items), "re-rendering the output must change nothing")
	})
}

// forgedMemorySeeds are inputs whose targets carry memory annotations
// that name attacker-ca, which no source and no target data holds.
func forgedMemorySeeds() [][]byte {
	prev := block(string(attacker.PEM()))
	return [][]byte{
		withAnnotations("Bundle", nil, map[string]string{trustbundle.PreviousAnnotation: prev}),
		withAnnotations("Copy", nil, map[string]string{trustbundle.PreviousAnnotation: prev, trustbundle.RetiredAnnotation: retiredOf("ca-2025")}),
		withAnnotations("Bundle", []string{"ca-2026"}, map[string]string{trustbundle.PreviousAnnotation: prev, trustbundle.RetiredAnnotation: retiredOf("attacker-ca")}),
		withAnnotations("Bundle", nil, map[string]string{trustbundle.RetiredAnnotation: retiredOf("attacker-ca", "ca-2025")}),
		trustManagerInput(string(attacker.PEM())),
	}
}

// noKeyMaterial fails when text (stderr, an error, results) carries a
// private key's name or PEM armour: messages describe input, never quote
// key material.
func noKeyMaterial(t *testing.T, text, what string) {
	t.Helper()
	for _, m := range []string{"PRIVATE KEY", "-----BEGIN", "-----END"} {
		require.NotContains(t, text, m, "%s must never carry key material", what)
	}
}

// readable reports whether kyaml's reader reads b as a ResourceList.
func readable(b []byte) bool {
	_, err := (&kio.ByteReadWriter{Reader: bytes.NewReader(b), KeepReaderAnnotations: true}).Read()
	return err == nil
}

// itemTexts returns every item's YAML, in order.
func itemTexts(t *testing.T, items []*yaml.RNode) []string {
	t.Helper()
	out := make([]string, len(items))
	for i, it := range items {
		s, err := it.String()
		require.NoError(t, err)
		out[i] = s
	}
	return out
}
