package pass_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/pass"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/internal/golden"
)

// A command on the repository pass: read the input as text, split it into
// packages, decode the policies, see the trust domains when the input is
// the repository's top, and do the command's work on each package on
// every core, the results in package order. Here: each package's
// directory and how many CAs its policies' bundles hold.
func ExampleEach() {
	dir, _ := os.MkdirTemp("", "pass-example")
	defer os.RemoveAll(dir)
	for _, c := range []string{"east", "west"} {
		_ = os.CopyFS(filepath.Join(dir, "clusters", c), os.DirFS(golden.Path("examples", "multicluster", "clusters", c)))
	}
	now := time.Date(2027, 1, 4, 0, 0, 0, 0, time.UTC)
	tree := resio.ScanPaths([]string{dir}, nil, layout.IsPolicy)
	pkgs, _ := pass.FromTree(tree).Split()
	pass.Decode(pkgs)
	if resio.IsRepositoryTop(dir) {
		_ = pass.Domains(pkgs, now, nil)
	}
	pass.Each(pkgs, 0, func(p *pass.Package, r *resio.Resources, err error) string {
		held := 0
		for _, e := range p.Explain(layout.WithoutPolicies(r.Items), now) {
			held += len(e.Trust)
		}
		rel, _ := filepath.Rel(dir, p.Dir)
		return fmt.Sprintf("%s: %d", filepath.ToSlash(rel), held)
	}, func(_ int, line string) { fmt.Println(line) })
	// Output:
	// clusters/east: 2
	// clusters/west: 2
}
