package synth

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
)

// TestPlainShapeIsStable pins the hand-made shape: benchmarks compare runs
// of it across commits.
func TestPlainShapeIsStable(t *testing.T) {
	a := ResourceList(Options{Resources: 40, Bundles: 3, Seed: 5})
	b := ResourceList(Options{Resources: 40, Bundles: 3, Seed: 5, Shape: Plain})
	if !bytes.Equal(a, b) {
		t.Fatal("the default shape must be Plain")
	}
	if n := bytes.Count(a, []byte("\n- apiVersion: ")); n != 40 {
		t.Fatalf("want 40 items, got %d", n)
	}
	if bytes.Contains(a, []byte("config.kubernetes.io/index")) {
		t.Fatal("a hand-made list carries no orchestrator annotations")
	}
}

// TestShapesMatchOrchestrators runs kpt and kustomize on a generated
// package with an exec function that records its stdin, and checks that
// the generator reproduces what each one sent, byte for byte.
func TestShapesMatchOrchestrators(t *testing.T) {
	for _, shape := range []Shape{KptEval, KptRender, Kustomize} {
		t.Run(string(shape), func(t *testing.T) {
			tool := "kpt"
			if shape == Kustomize {
				tool = "kustomize"
			}
			// The harness's finder: the pinned bin/ before PATH, and a skip
			// naming how to get a missing tool.
			bin := e2eharness.Tool(t, tool)
			tmp := t.TempDir()
			capture := filepath.Join(tmp, "capture.sh")
			recorded := filepath.Join(tmp, "stdin.yaml")
			script := "#!/bin/sh\ntee " + recorded + "\n"
			if err := os.WriteFile(capture, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			pkg := filepath.Join(tmp, "pkg")
			o := Options{Resources: 23, Bundles: 3, Seed: 2, PerFile: 4, Shape: shape, Exec: capture, PackagePath: pkg}
			if err := WritePackage(pkg, o); err != nil {
				t.Fatal(err)
			}
			var cmd *exec.Cmd
			switch shape {
			case KptEval:
				// The policy lives outside the package: not an item.
				policy := filepath.Join(tmp, "policy.yaml")
				if err := os.Rename(filepath.Join(pkg, "policy.yaml"), policy); err != nil {
					t.Fatal(err)
				}
				cmd = exec.Command(bin, "fn", "eval", pkg, "--exec", capture, "--fn-config", policy)
			case KptRender:
				cmd = exec.Command(bin, "fn", "render", pkg, "--allow-exec")
			case Kustomize:
				cmd = exec.Command(bin, "build", "--enable-alpha-plugins", "--enable-exec", pkg)
			}
			cmd.Dir = tmp
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, out)
			}
			got, err := os.ReadFile(recorded)
			if err != nil {
				t.Fatal(err)
			}
			want := ResourceList(o)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s sent a different list than the generator makes\n%s", tool, firstDifference(got, want))
			}
		})
	}
}

func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			lo := max(0, i-3)
			return "line " + strconv.Itoa(i+1) + ":\n  sent:      " + strings.Join(g[lo:min(len(g), i+3)], "\n             ") +
				"\n  generated: " + strings.Join(w[lo:min(len(w), i+3)], "\n             ")
		}
	}
	return "(equal)"
}
