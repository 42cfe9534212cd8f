package initpolicy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/initpolicy"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/internal/golden"
)

var examplesDir = golden.Path("examples")

// TestInitOnEveryExampleRenders writes a starter policy for each example
// and runs the function with it on the example's resources: the render must
// succeed (no error result) and write every proposed target.
func TestInitOnEveryExampleRenders(t *testing.T) {
	entries, err := os.ReadDir(examplesDir)
	if os.IsNotExist(err) {
		t.Skip("no examples/ directory")
	}
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		// init writes the policy of one package: an example that is a
		// repository of several (one per cluster) is run package by
		// package.
		dirs := []string{filepath.Join(examplesDir, e.Name())}
		if pkgs, _ := filepath.Glob(filepath.Join(examplesDir, e.Name(), "clusters", "*", "rotation-policy.yaml")); len(pkgs) > 1 {
			dirs = dirs[:0]
			for _, p := range pkgs {
				dirs = append(dirs, filepath.Dir(p))
			}
		}
		for _, dir := range dirs {
			rel, _ := filepath.Rel(examplesDir, dir)
			// With the example's own policy init keeps its targets;
			// without it (a new user's repository) init proposes
			// everything itself.
			for _, withPolicy := range []bool{true, false} {
				name := rel + "/with-its-policy"
				if !withPolicy {
					name = rel + "/without-a-policy"
				}
				t.Run(name, func(t *testing.T) { initAndRender(t, dir, withPolicy) })
			}
		}
		ran++
	}
	if ran == 0 {
		t.Skip("examples/ holds no example")
	}
}

func initAndRender(t *testing.T, dir string, withPolicy bool) {
	all, warnings, err := initpolicy.Read([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings reading the example: %q", warnings)
	}
	if !slices.ContainsFunc(all, layout.IsPolicy) {
		t.Skipf("%s holds no policy that render, check and init read (a Helm chart whose .krmignore leaves it out): not a package", dir)
	}
	var items []*yaml.RNode
	for _, it := range all {
		if withPolicy || it.GetKind() != "RotationPolicy" {
			items = append(items, it)
		}
	}
	plan, err := initpolicy.Scan(items, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Bundles) == 0 && len(plan.ControlPlanes) == 0 {
		t.Fatalf("init found no CA and no Cluster API control plane in example %s", dir)
	}
	text, err := plan.YAML("")
	if err != nil {
		t.Fatal(err)
	}
	// The examples use long-lived certificates and run on the
	// wall clock, as a user's first render does.
	renderTargets(t, plan, text, items, time.Now)
}

// renderTargets runs the function with the policy init wrote (text, of
// plan) on items: the render must succeed (no error result) and write
// every proposed target.
func renderTargets(t *testing.T, plan *initpolicy.Proposal, text []byte, items []*yaml.RNode, now func() time.Time) {
	t.Helper()
	policy, err := yaml.Parse(string(text))
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := rotate.Processor{Now: now}.Run(policy, items, nil)
	if err != nil {
		t.Fatalf("render with the init policy failed: %v\npolicy:\n%s", err, text)
	}
	for _, b := range plan.Bundles {
		found := false
		for _, it := range out {
			if it.GetKind() == b.TargetKind && it.GetNamespace() == b.TargetNamespace && it.GetName() == b.TargetName {
				hash := it.GetAnnotations("rotate-certs.dev/bundle-hash")["rotate-certs.dev/bundle-hash"]
				found = strings.HasPrefix(hash, "sha256:")
			}
		}
		if !found {
			t.Errorf("bundle %s: target %s %s/%s not rendered", b.Name, b.TargetKind, b.TargetNamespace, b.TargetName)
		}
	}
}
