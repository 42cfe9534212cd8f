package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/controlplane"
)

// meshProcedure is a mesh example walked through its mesh's three-step
// anchor rotation, as its README does.
type meshProcedure struct {
	example string
	// rolled are the workloads the mesh's injector injects, which
	// restart.mesh rolls at every trust change, and the control plane's
	// readers of the bundle.
	rolled []string
	// reissue commits step 2 in the package dir: the issuer (Linkerd) or
	// intermediate (Istio) re-issued from the new anchor.
	reissue func(t *testing.T, dir string)
}

var meshProcedures = []meshProcedure{
	{example: "linkerd",
		rolled: []string{"Deployment linkerd/linkerd-identity", "Deployment linkerd/linkerd-destination",
			"Deployment linkerd/linkerd-proxy-injector", "Deployment emojivoto/web", "Deployment emojivoto/emoji",
			"Deployment emojivoto/voting", "Deployment tools/debug-shell"},
		reissue: func(t *testing.T, dir string) {
			copyFile(t, filepath.Join(dir, "next", "identity-issuer.yaml"), filepath.Join(dir, "identity-issuer.yaml"))
		}},
	{example: "istio",
		rolled: []string{"Deployment shop/checkout", "Deployment catalog/search"},
		reissue: func(t *testing.T, dir string) {
			next, err := os.ReadFile(filepath.Join(dir, "next", "cacerts-intermediate.txt"))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "cacerts.yaml")
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, line := range strings.SplitAfter(string(text), "\n") {
				if strings.HasPrefix(line, "  ca-cert.pem:") || strings.HasPrefix(line, "  ca-key.pem:") || strings.HasPrefix(line, "  cert-chain.pem:") {
					continue
				}
				out = append(out, line)
				if line == "data:\n" {
					out = append(out, string(next))
				}
			}
			if err := os.WriteFile(path, []byte(strings.Join(out, "")), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
}

// TestMeshRollouts walks the Linkerd and Istio examples through their
// meshes' anchor rotation on a real API server with the Deployment
// controller running, each step rendered (`render --now`) and applied as
// CI commits it: step 1 (the new anchor beside the old one) rolls exactly
// the workloads the mesh injects and the control plane's readers of the
// bundle - one new ReplicaSet each, every other workload, the opted-out
// ones included, none; step 2 (the issuer or intermediate re-issued from
// the new anchor) changes no trust and rolls nothing; step 3 (the old
// anchor dropped once dropUnusedAfter has passed) rolls the same workloads
// once more, and no other.
func TestMeshRollouts(t *testing.T) {
	controlplane.RequireBinaries(t)
	for _, mp := range meshProcedures {
		t.Run(mp.example, func(t *testing.T) {
			cp := startControlPlane(t)
			dir := filepath.Join(stage(t, mp.example), "examples", mp.example)
			now := policyNow(t, filepath.Join(dir, "rotation-policy.yaml"))
			before := clusterResources(t, dir)
			apply(t, cp, before, fieldManager)
			prev := snapshot(t, cp, before)
			step := func(name string, at time.Time, want []string) {
				t.Helper()
				mustCommand(t, dir, nil, "", binary, "render", ".", "--policy", "rotation-policy.yaml", "--now", at.Format(time.RFC3339))
				stream := clusterResources(t, dir)
				apply(t, cp, stream, fieldManager)
				cur := snapshot(t, cp, stream)
				for _, w := range keys(cur.revisions) {
					added, _ := newRevisions(prev, cur, w)
					n := 0
					if slices.Contains(want, w) {
						n = 1
					}
					if len(added) != n {
						t.Errorf("%s: %s got %d new ReplicaSets %v, want %d", name, w, len(added), added, n)
					}
				}
				prev = cur
			}
			for _, w := range mp.rolled {
				if _, ok := prev.revisions[w]; !ok {
					t.Fatalf("the procedure names %s, which the example does not have", w)
				}
			}
			step("step 1, the new anchor", now, mp.rolled)
			mp.reissue(t, dir)
			step("step 2, the issuer re-issued", now.Add(time.Hour), nil)
			step("step 3, the old anchor dropped", now.Add(4*24*time.Hour), mp.rolled)
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
