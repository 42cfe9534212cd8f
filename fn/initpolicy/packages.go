package initpolicy

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
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

// Tree is what init proposes for its whole input.
type Tree struct {
	// Packages are the packages' plans, by directory.
	Packages []PackagePlan
	// Notes are what init left out of every package (files in none).
	Notes []string
}

// ScanTree plans a policy for each package of items (see above), at now,
// roots being the package directories found on disk (PackageRoots),
// and proposes a trust domain for the bundles of different packages that
// share a source CA. Input with fewer than two package roots, or read from
// stdin, is planned as Scan plans it, as one PackagePlan with Dir "". Otherwise the
// files in no package are left out, with a note, and a package for which
// nothing is proposed (no CA source, no Cluster API control plane) gets no
// policy; when no package has one, the whole input is planned as one, with
// Dir "".
func ScanTree(items []*yaml.RNode, roots []string, now time.Time) (*Tree, error) {
	parts, rest := splitPackages(items, roots)
	tree := &Tree{Notes: outsideNotes(rest)}
	for _, p := range parts {
		plan, err := Scan(p.items, now)
		if err != nil {
			return nil, err
		}
		if len(plan.Bundles) > 0 || len(plan.ControlPlanes) > 0 {
			tree.Packages = append(tree.Packages, PackagePlan{Dir: p.dir, Proposal: plan})
		}
	}
	if len(tree.Packages) == 0 {
		plan, err := Scan(items, now)
		if err != nil {
			return nil, err
		}
		return &Tree{Packages: []PackagePlan{{Proposal: plan}}}, nil
	}
	proposeDomains(tree.Packages)
	return tree, nil
}

// part is one package's resources.
type part struct {
	dir   string
	items []*yaml.RNode
}

// splitPackages groups items by package root (packageRoot, and the
// directories extra), each item in
// the deepest root above its file, in the order of their directories; rest
// are the items under no root. It returns no part when items are not a
// tree of packages: fewer than two roots, or an item read from no file
// (stdin). One root is not split out: the policy goes where --output says,
// and may well scope the files beside the root's directory too.
func splitPackages(items []*yaml.RNode, extra []string) (parts []part, rest []*yaml.RNode) {
	roots := map[string]int{}
	add := func(dir string) {
		if _, ok := roots[dir]; !ok {
			roots[dir] = len(parts)
			parts = append(parts, part{dir: dir})
		}
	}
	for _, it := range items {
		file := layout.FileOf(it)
		if file == "" || file == "-" {
			return nil, nil
		}
		if packageRoot(it) {
			add(path.Dir(path.Clean(file)))
		}
	}
	for _, dir := range extra {
		add(dir)
	}
	if len(parts) < 2 {
		return nil, nil // one package at most: all of the input, as ever
	}
	for _, it := range items {
		if i, ok := rootOf(roots, layout.FileOf(it)); ok {
			parts[i].items = append(parts[i].items, it)
			continue
		}
		rest = append(rest, it)
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].dir < parts[j].dir })
	return parts, rest
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

// rootOf returns the index of the deepest root whose directory holds file.
func rootOf(roots map[string]int, file string) (int, bool) {
	for dir := path.Dir(path.Clean(file)); ; dir = path.Dir(dir) {
		if i, ok := roots[dir]; ok {
			return i, true
		}
		if dir == "." || dir == "/" || dir == ".." || strings.HasSuffix(dir, "/..") {
			return 0, false
		}
	}
}
