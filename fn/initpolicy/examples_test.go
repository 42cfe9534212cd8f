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
// (each package of one that holds several) and runs the function with it
// on the example's resources: the render must succeed (no error result)
// and write every proposed target. Then it runs init over each whole
// example, as over a repository's top, and renders the policies it
// proposes, one per package, from the top.
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
		// And init over the whole example at once, as a user runs it at
		// a repository's top: a policy per package, rendered together
		// from the top.
		for _, withPolicy := range []bool{true, false} {
			name := e.Name() + "/whole/with-its-policies"
			if !withPolicy {
				name = e.Name() + "/whole/without-a-policy"
			}
			t.Run(name, func(t *testing.T) { initWholeAndRender(t, e.Name(), withPolicy) })
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
	plan, err := initpolicy.Propose(items, time.Now())
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

// initWholeAndRender runs init over a copy of examples/name (with its
// policies or without), writes the policies it proposes and renders the
// copy from its top.
func initWholeAndRender(t *testing.T, name string, withPolicy bool) {
	top := stageTree(t, map[string]string{".": name}, true)
	items, _, err := initpolicy.Read([]string{top}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(items, layout.IsPolicy) {
		t.Skipf("%s holds no policy that render, check and init read: not a package", name)
	}
	if !withPolicy {
		for _, it := range items {
			if layout.IsPolicy(it) {
				if err := os.Remove(layout.FileOf(it)); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
		}
	}
	renderTreeTop(t, top, initTree(t, top))
}
