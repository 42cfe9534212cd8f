// Package layout finds the packages of a repository of many: a
// RotationPolicy applies to the directory of the file that holds it and
// everything below it, like a kpt package, and a deeper policy's directory
// is a package of its own, left out of the outer one. So a GitOps
// repository with clusters/prod and clusters/staging, each with its own
// policy and objects of the same names, is two packages that never see
// each other's objects.
//
// It is plain data over already-read resources: the caller reads the
// files (resio.Walk's rules) and annotates each resource with its path.
package layout

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Package is one directory that holds a RotationPolicy, with every
// resource it scopes.
type Package struct {
	// Dir is the package's directory as the resources' paths name it
	// (slash-separated, "." for the top).
	Dir string
	// Policies are the RotationPolicy resources in files of Dir itself,
	// in file order. render needs exactly one; check reads every one.
	Policies []*yaml.RNode
	// Items are the package's resources, the policies included, in input
	// order: those in files under Dir and not under a deeper package.
	Items []*yaml.RNode
}

// Split groups items by package: the directory of each item root picks
// (IsPolicy: each file's policies) and each of dirs is a package's; an
// item belongs to the deepest package whose directory holds its file.
// Each item's file is its path annotation (a slash-separated path as the
// caller read it); an item without one belongs to no package. Packages
// come in directory order, their Policies the policies among the items
// root picks; rest are the items in no package, in input order. It is the
// one splitter: the repository pass (fn/pass) splits with it for every
// command; `init` splits at kustomizations and Kptfiles too, where
// policies will go.
func Split(items []*yaml.RNode, root func(*yaml.RNode) bool, dirs []string) (pkgs []*Package, rest []*yaml.RNode) {
	byDir := map[string]*Package{}
	add := func(dir string) *Package {
		p, ok := byDir[dir]
		if !ok {
			p = &Package{Dir: dir}
			byDir[dir] = p
			pkgs = append(pkgs, p)
		}
		return p
	}
	for _, it := range items {
		if !root(it) {
			continue
		}
		file := FileOf(it)
		if file == "" {
			continue
		}
		p := add(path.Dir(path.Clean(file)))
		if IsPolicy(it) {
			p.Policies = append(p.Policies, it)
		}
	}
	for _, dir := range dirs {
		add(dir)
	}
	sort.SliceStable(pkgs, func(i, j int) bool { return pkgs[i].Dir < pkgs[j].Dir })
	for _, it := range items {
		if p := packageOf(byDir, FileOf(it)); p != nil {
			p.Items = append(p.Items, it)
			continue
		}
		rest = append(rest, it)
	}
	return pkgs, rest
}

// FileOf returns the file item was read from (its path annotation), or ""
// when it has none. Any path the file system allows is a path: how it
// looks decides only how a message shows it (kube.SafePath), never which
// package a resource belongs to.
func FileOf(item *yaml.RNode) string {
	file, _ := kube.FileOf(item)
	return file
}

// packageOf returns the package of the deepest policy directory that holds
// file, or nil.
func packageOf(byDir map[string]*Package, file string) *Package {
	if file == "" {
		return nil
	}
	for dir := path.Dir(path.Clean(file)); ; dir = path.Dir(dir) {
		if p, ok := byDir[dir]; ok {
			return p
		}
		if dir == "." || dir == "/" || dir == ".." || strings.HasSuffix(dir, "/..") {
			return nil
		}
	}
}

// IsPolicy reports whether item is a RotationPolicy of the supported
// apiVersion.
func IsPolicy(item *yaml.RNode) bool {
	// Kind and apiVersion alone, not the whole reference (kube.RefOf reads
	// the metadata and the file too): every command asks this of every
	// object, more than once.
	if item == nil || item.YNode().Kind != yaml.MappingNode {
		return false
	}
	return item.GetKind() == policy.Kind && item.GetApiVersion() == policy.APIVersion
}

// WithoutPolicies returns items without the RotationPolicies among them.
func WithoutPolicies(items []*yaml.RNode) []*yaml.RNode {
	out := make([]*yaml.RNode, 0, len(items))
	for _, it := range items {
		if !IsPolicy(it) {
			out = append(out, it)
		}
	}
	return out
}

// OnePolicy returns the package's policy, or an error naming the files
// when the directory holds more than one: one package has one policy.
func (p *Package) OnePolicy() (*yaml.RNode, error) {
	if len(p.Policies) == 1 {
		return p.Policies[0], nil
	}
	var where []string
	for _, pol := range p.Policies {
		where = append(where, fmt.Sprintf("%s (%s)", kube.Safe(kube.RefOf(pol).Name), kube.SafePath(FileOf(pol))))
	}
	return nil, fmt.Errorf("package %s holds %d RotationPolicies: %s; a package has one policy - merge their bundles into one, or move one into a directory of its own", kube.SafePath(p.Dir), len(p.Policies), strings.Join(where, ", "))
}
