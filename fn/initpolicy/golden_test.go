package initpolicy_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/initpolicy"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/internal/golden"
)

// initNow is when the init goldens are written: every CA of their inputs is
// valid then.
var initNow = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// TestInitGolden writes a starter policy for packages whose trust is
// already wired - a trust-manager Bundle, a mesh's trust object, namespaces
// a mesh injects - and compares it with testdata/init/<case>/expected.yaml
// (make golden rewrites them); what it proposes must be wired as the
// golden says, and the policy must render, writing every target.
func TestInitGolden(t *testing.T) {
	for _, c := range []struct {
		name, dir string
		// target is a bundle's target ("Kind namespace/name key"), mesh
		// its restart.mesh.
		target, mesh string
	}{
		{"linkerd", "examples/linkerd", "ConfigMap linkerd/linkerd-identity-trust-roots ca-bundle.crt", "linkerd"},
		{"istio", "examples/istio", "Secret istio-system/cacerts root-cert.pem", "istio"},
		{"trust-manager", "examples/trust-manager", "Bundle /corp-trust ", ""},
		{"linkerd-trust-manager", "testdata/init/linkerd-trust-manager/input", "Bundle /linkerd-identity-trust-roots ", "linkerd"},
		{"istio-ca-root-cert", "testdata/init/istio-ca-root-cert/input", "ConfigMap istio-system/istio-root-ca-trust root-cert.pem", ""},
		{"mesh-without-trust-object", "testdata/init/mesh-without-trust-object/input", "ConfigMap shop/payments-ca-trust ca.crt", ""},
		{"kustomize-namespace", "testdata/init/kustomize-namespace/input", "ConfigMap widget-system/trusted-ca-trust ca.crt", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tree, err := resio.ReadTree(golden.Path(filepath.FromSlash(c.dir)))
			if err != nil {
				t.Fatal(err)
			}
			var items []*yaml.RNode
			for _, it := range tree.Items {
				if !layout.IsPolicy(it) { // a new user's package: no policy yet
					items = append(items, it)
				}
			}
			// One package, in the namespaces its kustomization gives (its
			// files named from its directory, as ReadTree names them).
			t.Chdir(golden.Path(filepath.FromSlash(c.dir)))
			ns := initpolicy.Namespaces([]string{"."})
			scanned, err := initpolicy.ProposeTree(initpolicy.Input{Items: items, Namespace: ns}, initNow)
			if err != nil {
				t.Fatal(err)
			}
			plan := scanned.Packages[0].Proposal
			text, err := plan.YAML("")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, golden.Path("testdata", "init", c.name, "expected.yaml"), text)
			var targets []string
			for _, b := range plan.Bundles {
				got := b.TargetKind + " " + b.TargetNamespace + "/" + b.TargetName + " " + b.TargetKey
				targets = append(targets, got)
				if got == c.target && b.Mesh != c.mesh {
					t.Errorf("bundle %s: restart.mesh %q, want %q", b.Name, b.Mesh, c.mesh)
				}
			}
			if !slices.Contains(targets, c.target) {
				t.Errorf("targets %q, want one %q", targets, c.target)
			}
			renderTargets(t, plan, text, items, func() time.Time { return initNow })
		})
	}
}

// TestInitNotesAMeshNoTargetReaches: namespaces a mesh injects, and no
// bundle whose target the mesh's workloads trust, are noted, naming the
// namespaces and the objects that would take restart.mesh.
func TestInitNotesAMeshNoTargetReaches(t *testing.T) {
	tree, err := resio.ReadTree(golden.Path("testdata", "init", "mesh-without-trust-object", "input"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := initpolicy.Propose(tree.Items, initNow)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(plan.Notes, "\n")
	for _, want := range []string{"Istio injects the pods of Namespace shop (Namespace label istio-injection: enabled)", "Secret cacerts", "restart.mesh: istio"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}
