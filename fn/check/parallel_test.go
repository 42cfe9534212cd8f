package check

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/synth"
	"github.com/stretchr/testify/require"
)

// TestParallelCheckIsSerialCheck checks a generated repository of
// clusters (every example that is a package, in each) on one core and on
// every core: the report, in each format, the notes and errors on stderr
// and the exit status are the same, byte for byte - a package whose
// policy does not apply and a file that does not parse included.
func TestParallelCheckIsSerialCheck(t *testing.T) {
	dir := t.TempDir()
	entries, err := os.ReadDir(golden.Path("examples"))
	require.NoError(t, err)
	packages := map[string]string{}
	for _, e := range entries {
		if _, err := os.Stat(golden.Path("examples", e.Name(), "rotation-policy.yaml")); err == nil {
			packages[e.Name()] = golden.Path("examples", e.Name())
		}
	}
	require.NoError(t, synth.WriteFleet(dir, 3, packages))
	broken := filepath.Join(dir, filepath.FromSlash(synth.FleetCluster(1)), "envoy-gateway")
	require.NoError(t, os.WriteFile(filepath.Join(broken, "rotation-policy.yaml"),
		[]byte("apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n  name: broken\nspec:\n  trustBundles:\n  - name: b\n    sources: []\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(broken, "bad.yaml"), []byte("a: [\n"), 0o644))
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			run := func() (exit.Code, string, string) {
				var stdout, stderr bytes.Buffer
				log := exit.NewPrinter(&stderr, "rotate-certs check")
				err := Run(Options{Paths: []string{dir}, Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Format: format}, &stdout, log)
				log.Error(err) // as the command prints it
				return exit.CodeOf(err), stdout.String(), stderr.String()
			}
			old := runtime.GOMAXPROCS(1)
			code, stdout, stderr := run()
			runtime.GOMAXPROCS(old)
			require.Equal(t, exit.Usage, code, stderr)
			require.Contains(t, stderr, "policy broken")
			require.Contains(t, stderr, "bad.yaml")
			pcode, pstdout, pstderr := run()
			require.Equal(t, code, pcode)
			require.Equal(t, stdout, pstdout)
			require.Equal(t, stderr, pstderr)
		})
	}
}
