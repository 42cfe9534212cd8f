package initpolicy_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/initpolicy"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/render"
)

// stageTree copies examples into a new git work tree's top: each key of
// copies is a directory of the tree, its value the example directory
// (under examples/) copied there. Policies are left out unless
// withPolicy. It returns the tree's top.
func stageTree(t *testing.T, copies map[string]string, withPolicy bool) string {
	t.Helper()
	top := t.TempDir()
	if err := os.Mkdir(filepath.Join(top, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for to, from := range copies {
		src := filepath.Join(examplesDir, filepath.FromSlash(from))
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !withPolicy && d.Name() == "rotation-policy.yaml" {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			dst := filepath.Join(top, filepath.FromSlash(to), rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			return os.WriteFile(dst, data, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return top
}

// TestScanTreeProposesDomains runs init over trees of several packages:
// bundles of different packages whose sources hold the same CA get one
// domain, named from that CA (or as a policy of the input names it), the
// others none; the proposed policies, one per package, render together
// from the tree's top (which also checks that the bundles of a domain
// agree on retain).
func TestScanTreeProposesDomains(t *testing.T) {
	for _, c := range []struct {
		name       string
		copies     map[string]string
		withPolicy bool
		// domains maps "package/bundle" to its domain ("" for none);
		// every proposed bundle is listed.
		domains map[string]string
	}{
		{
			name:   "two clusters copied from linkerd",
			copies: map[string]string{"clusters/a": "linkerd", "clusters/b": "linkerd"},
			domains: map[string]string{
				"clusters/a/linkerd-identity-trust-roots": "root.linkerd.cluster.local", "clusters/b/linkerd-identity-trust-roots": "root.linkerd.cluster.local",
				"clusters/a/linkerd-identity-issuer": "identity.linkerd.cluster.local", "clusters/b/linkerd-identity-issuer": "identity.linkerd.cluster.local",
			},
		},
		{
			name:   "multicluster without its policies",
			copies: map[string]string{".": "multicluster"},
			domains: map[string]string{
				"clusters/east/linkerd-identity-trust-roots": "root.linkerd.cluster.local", "clusters/west/linkerd-identity-trust-roots": "root.linkerd.cluster.local",
				"clusters/east/linkerd-identity-issuer": "", "clusters/west/linkerd-identity-issuer": "",
			},
		},
		{
			name:       "multicluster with its policies",
			copies:     map[string]string{".": "multicluster"},
			withPolicy: true,
			domains: map[string]string{
				"clusters/east/linkerd-trust-anchor": "mesh-anchors", "clusters/west/linkerd-trust-anchor": "mesh-anchors",
				"clusters/east/linkerd-identity-issuer": "", "clusters/west/linkerd-identity-issuer": "",
			},
		},
		{
			name:   "clusters that share nothing",
			copies: map[string]string{"clusters/gw": "envoy-gateway", "clusters/mesh": "linkerd"},
			domains: map[string]string{
				"clusters/gw/envoy-gateway": "", "clusters/mesh/linkerd-identity-trust-roots": "", "clusters/mesh/linkerd-identity-issuer": "",
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			top := stageTree(t, c.copies, c.withPolicy)
			tree := initTree(t, top)
			got := map[string]string{}
			for _, p := range tree.Packages {
				rel, _ := filepath.Rel(top, p.Dir)
				for _, b := range p.Bundles {
					got[filepath.ToSlash(rel)+"/"+b.Name] = b.Domain
				}
			}
			if len(got) != len(c.domains) {
				t.Errorf("proposed bundles %v, want %v", got, c.domains)
			}
			for k, want := range c.domains {
				if d, ok := got[k]; !ok || d != want {
					t.Errorf("%s: domain %q (proposed: %t), want %q", k, d, ok, want)
				}
			}
			renderTreeTop(t, top, tree)
		})
	}
}

// initTree runs init's scan over the tree at top.
func initTree(t *testing.T, top string) *initpolicy.Proposals {
	t.Helper()
	items, _, err := initpolicy.Read([]string{top}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := initpolicy.ProposeTree(initpolicy.Input{Items: items, Roots: initpolicy.PackageRoots(items)}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// renderTreeTop writes each package's proposed policy in place of the
// package's own and renders the tree from its top (a git work tree's top:
// it sees every domain whole). The render must succeed with no warning
// about a domain.
func renderTreeTop(t *testing.T, top string, tree *initpolicy.Proposals) {
	t.Helper()
	for _, p := range tree.Packages {
		text, err := p.YAML("")
		if err != nil {
			t.Fatalf("package %s: %v", p.Dir, err)
		}
		if err := os.WriteFile(policyFile(t, top, p.Dir), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	err := render.Render(top, render.Options{Now: time.Now, Stdout: &stdout, Stderr: exit.NewPrinter(&stderr, "rotate-certs render")})
	if err != nil {
		t.Fatalf("render from the top with the proposed policies: %v\nstderr:\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "domain") {
		t.Errorf("render from the top warned about a domain:\n%s", stderr.String())
	}
}

// policyFile is where the policy init proposes for package dir goes: in
// it, or, for input planned as one (dir ""), over the tree's one policy,
// else at its top.
func policyFile(t *testing.T, top, dir string) string {
	t.Helper()
	if dir != "" {
		return filepath.Join(dir, "rotation-policy.yaml")
	}
	items, _, err := initpolicy.Read([]string{top}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var policies []string
	for _, it := range items {
		if layout.IsPolicy(it) {
			policies = append(policies, layout.FileOf(it))
		}
	}
	if len(policies) == 1 {
		return policies[0]
	}
	return filepath.Join(top, "rotation-policy.yaml")
}
