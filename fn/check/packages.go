package check

import (
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pass"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// group is one package as check reports it: the pass's package and the
// path its rows name it by.
type group struct {
	*pass.Package
	path string
}

// splitPackages splits what check read into packages (the pass's split):
// each directory holding a RotationPolicy; the resources from stdin, with
// the policies on stdin (functionConfigs of a ResourceList included);
// and the resources under no policy. forced (the --policy file) makes all
// of it one package. check reads its policies decoded: the split's are
// decoded and their trees let go before it (pass.Source.Lighten).
func splitPackages(src *pass.Source, forced *yaml.RNode) []group {
	if forced != nil {
		return []group{{Package: src.All("", []*yaml.RNode{forced})}}
	}
	src.Lighten()
	pkgs, rest := src.Split()
	var groups []group
	for _, p := range pkgs {
		groups = append(groups, group{Package: p, path: kube.SafePath(p.Dir)})
	}
	stdin, none := rest.Where(false), rest.Where(true)
	if len(stdin.Policies) > 0 {
		stdin.Dir = "-"
		groups = append(groups, group{Package: stdin, path: "-"})
	} else {
		none = pass.Join("", nil, none, stdin)
	}
	if !none.Empty() || len(groups) == 0 {
		groups = append(groups, group{Package: none})
	}
	return groups
}

// packages returns the pass's packages of groups.
func packages(groups []group) []*pass.Package {
	out := make([]*pass.Package, len(groups))
	for i, g := range groups {
		out[i] = g.Package
	}
	return out
}
