package initpolicy

import (
	"fmt"
	"path"
	"slices"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/pass"
	"github.com/rotate-certs/rotate-certs/fn/resio"
)

// A tree of several packages (a repository of clusters) gets a policy per
// package, as render and check split it (fn/layout): a package is the
// directory of a RotationPolicy, and where there is none yet, of a
// kustomization or a Kptfile - where a policy would be listed and wired. A
// deeper package is left out of the outer one. The bundles of different
// packages that share a source CA are given one trust domain (domain.go).

// PackagePlan is what init proposes for one package.
type PackagePlan struct {
	// Dir is the package's directory as the resources' paths name it
	// (slash-separated); "" when the input is planned as one (one package
	// root at most, stdin).
	Dir string
	*Proposal
}

// Proposals is what init proposes for its whole input.
type Proposals struct {
	// Packages are the packages' plans, by directory.
	Packages []PackagePlan
	// Notes are what init left out of every package (files in none).
	Notes []string
}

// Input is what init reads: the resources, the package directories found
// on disk (PackageRoots) and the namespaces kustomizations give them
// (Namespaces; nil: the manifests' own).
type Input struct {
	Items     []*yaml.RNode
	Roots     []string
	Namespace func(*yaml.RNode) string
}

// ProposeTree plans a policy for each package of in.Items (see above), at
// now, in.Roots being the package directories found on disk, and proposes
// a trust domain for the bundles of different packages that share a
// source CA. Input with fewer than two package roots, or read from stdin,
// is planned as Propose plans it, as one PackagePlan with Dir "". Otherwise
// the files in no package are left out, with a note, and a package for
// which nothing is proposed (no CA source, no Cluster API control plane)
// gets no policy; when no package has one, the whole input is planned as
// one, with Dir "". Readers are matched to what they read in the
// namespaces in.Namespace gives.
func ProposeTree(in Input, now time.Time) (*Proposals, error) {
	items := in.Items
	pkgs, rest := splitPackages(items, in.Roots)
	tree := &Proposals{Notes: outsideNotes(rest)}
	type scanned struct {
		plan *Proposal
		err  error
	}
	var errs []error
	pass.Each(pkgs, 0, func(p *pass.Package, r *resio.Resources, _ error) scanned {
		plan, err := scanIn(r.Items, in.Namespace, now)
		return scanned{plan, err}
	}, func(i int, s scanned) {
		switch {
		case s.err != nil:
			errs = append(errs, s.err)
		case len(s.plan.Bundles) > 0 || len(s.plan.ControlPlanes) > 0:
			tree.Packages = append(tree.Packages, PackagePlan{Dir: pkgs[i].Dir, Proposal: s.plan})
		}
	})
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if len(tree.Packages) == 0 {
		plan, err := scanIn(items, in.Namespace, now)
		if err != nil {
			return nil, err
		}
		return &Proposals{Packages: []PackagePlan{{Proposal: plan}}}, nil
	}
	proposeDomains(tree.Packages)
	return tree, nil
}

// splitPackages splits items by package root (packageRoot, and the
// directories extra) by the repository pass's one splitter, as render and
// check split by policies: each item in the deepest root above its file,
// in the order of their directories; rest are the items under no root.
// It returns no package when items are not a tree of packages: fewer than
// two roots, or an item read from no file (stdin). One root is not split
// out: the policy goes where --output says, and may well scope the files
// beside the root's directory too.
func splitPackages(items []*yaml.RNode, extra []string) (pkgs []*pass.Package, rest []*yaml.RNode) {
	for _, it := range items {
		if file := layout.FileOf(it); file == "" || file == "-" {
			return nil, nil
		}
	}
	pkgs, others := pass.FromItems(items).SplitAt(packageRoot, extra)
	if len(pkgs) < 2 {
		return nil, nil // one package at most: all of the input, as ever
	}
	r, _ := others.Read()
	return pkgs, r.Items
}

// outsideNotes says, per directory, that the resources of rest are in no
// package.
func outsideNotes(rest []*yaml.RNode) []string {
	var dirs []string
	count := map[string]int{}
	for _, it := range rest {
		dir := path.Dir(path.Clean(layout.FileOf(it)))
		if count[dir] == 0 {
			dirs = append(dirs, dir)
		}
		count[dir]++
	}
	var notes []string
	for _, d := range dirs {
		notes = append(notes, fmt.Sprintf("%s is in no package (no RotationPolicy, kustomization or Kptfile in it or above it): its %d resource(s) are not scanned",
			kube.SafePath(d), count[d]))
	}
	return notes
}

// packageRoot reports whether it makes its file's directory a package: a
// RotationPolicy, or a kustomization or Kptfile read (by its file's name, as
// kustomize and kpt find them: a kustomization may leave out its kind).
func packageRoot(it *yaml.RNode) bool {
	return slices.Contains(rootFiles, path.Base(layout.FileOf(it))) || layout.IsPolicy(it)
}
