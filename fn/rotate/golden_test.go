package rotate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// goldenDir holds one directory per case: input.yaml is a ResourceList
// written as a Go template (see testpki.TemplateFuncs), expected.yaml the
// whole output ResourceList, results included. `make golden`
// (UPDATE_GOLDEN=1) rewrites expected.yaml from the actual output; review
// the diff.
var goldenDir = golden.Path("testdata", "golden")

// execute runs the function on a ResourceList as kustomize and kpt do.
func execute(t *testing.T, input []byte) (output []byte, err error) {
	t.Helper()
	var out bytes.Buffer
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(input), Writer: &out, KeepReaderAnnotations: true}
	p := rotate.Processor{Now: func() time.Time { return testpki.GoldenNow }}
	err = framework.Execute(rotate.Framework(p), rw)
	return out.Bytes(), err
}

func goldenCases(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(goldenDir, "*", "input.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs, "no golden cases found")
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	return dirs
}

func goldenInput(t *testing.T, dir string) []byte {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(dir, "input.yaml"))
	require.NoError(t, err)
	in, err := testpki.ExpandTemplate(dir, string(text))
	require.NoError(t, err)
	return in
}

func TestGolden(t *testing.T) {
	for _, dir := range goldenCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			out, err := execute(t, goldenInput(t, dir))
			golden.Check(t, filepath.Join(dir, "expected.yaml"), out)

			// Exit status and output follow the results: any error result
			// means a non-nil error and no output resources.
			rl := parseResourceList(t, out)
			if strings.HasPrefix(filepath.Base(dir), "err-") {
				require.Error(t, err, "an err- case must fail")
				require.Empty(t, rl.items, "a failed render must output no resources")
				require.Contains(t, string(out), "severity: error")
			} else {
				require.NoError(t, err)
				require.NotContains(t, string(out), "severity: error")
			}
			require.NotContains(t, rl.results, "PRIVATE KEY", "results must never carry key material")
			require.NotContains(t, rl.results, "-----BEGIN", "results must never carry PEM blocks")
		})
	}
}

type resourceList struct {
	items   []*yaml.RNode
	results string
}

func parseResourceList(t *testing.T, b []byte) resourceList {
	t.Helper()
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(b), KeepReaderAnnotations: true}
	items, err := rw.Read()
	require.NoError(t, err)
	var results string
	if rw.Results != nil {
		results = rw.Results.MustString()
	}
	return resourceList{items: items, results: results}
}
