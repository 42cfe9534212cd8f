package check

import (
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// group is one package as check sees it: its resources (without the
// policies) and its policies.
type group struct {
	path     string
	items    []*yaml.RNode
	policies []*yaml.RNode
}

// splitPackages splits what check read into packages (package layout):
// each directory holding a RotationPolicy, by the resources' files; the
// resources from stdin, with the policies on stdin (functionConfigs of a
// ResourceList included); and the resources under no policy. forced (the
// --policy file) makes all of it one package.
func splitPackages(set *resio.Resources, forced *yaml.RNode) []group {
	all := append(append([]*yaml.RNode(nil), set.Items...), set.FunctionConfigs...)
	if forced != nil {
		return []group{{policies: []*yaml.RNode{forced}, items: withoutPolicies(all)}}
	}
	pkgs, rest := layout.Split(all)
	var groups []group
	for _, p := range pkgs {
		groups = append(groups, group{path: kube.SafePath(p.Dir), policies: p.Policies, items: withoutPolicies(p.Items)})
	}
	stdinGroup := group{path: "-"}
	var none group
	for _, n := range rest {
		file := layout.FileOf(n)
		switch {
		case file == "" && layout.IsPolicy(n):
			stdinGroup.policies = append(stdinGroup.policies, n)
		case file == "":
			stdinGroup.items = append(stdinGroup.items, n)
		default:
			none.items = append(none.items, n)
		}
	}
	if len(stdinGroup.policies) > 0 {
		groups = append(groups, stdinGroup)
	} else {
		none.items = append(none.items, stdinGroup.items...)
	}
	if len(none.items) > 0 || len(groups) == 0 {
		groups = append(groups, none)
	}
	return groups
}

// withoutPolicies returns the resources of nodes that are not
// RotationPolicies.
func withoutPolicies(nodes []*yaml.RNode) []*yaml.RNode {
	var out []*yaml.RNode
	for _, n := range nodes {
		if !layout.IsPolicy(n) {
			out = append(out, n)
		}
	}
	return out
}
