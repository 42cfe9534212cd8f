package check

import (
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/parallel"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// group is one package as check sees it: its resources (without the
// policies) and its policies.
type group struct {
	path     string
	items    []*yaml.RNode
	policies []*yaml.RNode
	// decoded are the policies decoded (policy.Decode), one per policy,
	// once: the thresholds and each policy's explanation read them.
	decoded []decodedPolicy
}

// decodedPolicy is a policy as policy.Decode returns it.
type decodedPolicy struct {
	pol *policy.RotationPolicy
	err error
}

// decodePolicies decodes every group's policies once, on every core.
func decodePolicies(groups []group) {
	type at struct{ g, p int }
	var all []at
	for i := range groups {
		groups[i].decoded = make([]decodedPolicy, len(groups[i].policies))
		for j := range groups[i].policies {
			all = append(all, at{i, j})
		}
	}
	parallel.Map(len(all), 0, func() func(int) decodedPolicy {
		return func(i int) decodedPolicy {
			pol, err := policy.Decode(groups[all[i].g].policies[all[i].p])
			return decodedPolicy{pol, err}
		}
	}, func(i int, d decodedPolicy) { groups[all[i].g].decoded[all[i].p] = d })
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
