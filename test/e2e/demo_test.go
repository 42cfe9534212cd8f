package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/golden"
)

// TestDemo runs make demo's script (examples/demo.sh) as a fresh machine
// runs it, beside the binary under test and the pinned kustomize: it must
// end with the gate - certgen's in-place replacement committed without a
// render fails with its break, the same change with its render passes.
func TestDemo(t *testing.T) {
	kustomize := e2eharness.Tool(t, "kustomize")
	for _, tool := range []string{"git", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (the demo needs it)", tool)
		}
	}
	root := filepath.Dir(filepath.Dir(stageExample(t, "envoy-gateway")))
	script, err := os.ReadFile(golden.Path("examples", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "examples", "demo.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(kustomize, filepath.Join(root, "bin", "kustomize")); err != nil {
		t.Fatal(err)
	}
	r := e2eharness.Cmd{Dir: root}.Run(t, "bash", filepath.Join(root, "examples", "demo.sh"))
	if r.Code != 0 {
		t.Fatalf("demo.sh: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		"FAIL: this change breaks trust",
		"needs CA CN=example-ca-new",
		"second render: no changes",
		"example-leaf-old: OK",
		"PASS: trust changes, nothing breaks, nothing is planted",
		"Deployment envoy-gateway-system/envoy-ratelimit rolls",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the demo does not show %q:\n%s", want, r.Stdout)
		}
	}
}
