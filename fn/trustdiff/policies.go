package trustdiff

import (
	"fmt"
	"slices"
	"strings"
)

// policyChanges words what changed in the RotationPolicies: a policy or
// bundle added or removed, a mode switched, retain lengthened or
// shortened, sources or the target changed.
func policyChanges(base, head *Model) []Change {
	before := map[string]policySpec{}
	for _, p := range base.policies {
		before[p.resource.id()] = p
	}
	var out []Change
	seen := map[string]bool{}
	for _, p := range head.policies {
		seen[p.resource.id()] = true
		b, ok := before[p.resource.id()]
		if !ok {
			out = append(out, Change{Resource: p.resource, Change: "policy added, with bundles " + bundleNames(p)})
			continue
		}
		for _, w := range bundleChanges(b.bundles, p.bundles) {
			out = append(out, Change{Resource: p.resource, Change: w})
		}
	}
	for _, p := range base.policies {
		if !seen[p.resource.id()] {
			out = append(out, Change{Resource: p.resource, Change: "policy removed, with bundles " + bundleNames(p)})
		}
	}
	return out
}

// bundleNames lists p's bundles.
func bundleNames(p policySpec) string {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range p.bundles {
			if !yield(n) {
				return
			}
		}
	})
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// bundleChanges words the changes between the bundles of one policy.
func bundleChanges(before, after map[string]bundleSpec) []string {
	var out []string
	for _, name := range sortedNames(before, after) {
		b, inB := before[name]
		a, inA := after[name]
		switch {
		case !inB:
			out = append(out, fmt.Sprintf("bundle %s added (mode %s, target %s)", name, a.mode, a.target))
		case !inA:
			out = append(out, fmt.Sprintf("bundle %s removed", name))
		default:
			out = append(out, specChanges(name, b, a)...)
		}
	}
	return out
}

// specChanges words the changes of one bundle.
func specChanges(name string, b, a bundleSpec) []string {
	var out []string
	if b.mode != a.mode {
		out = append(out, fmt.Sprintf("bundle %s: mode switched from %s to %s", name, b.mode, a.mode))
	}
	if b.retain != a.retain {
		word := "changed"
		switch {
		case a.retainFor > 0 && (b.retainFor == 0 || a.retainFor < b.retainFor):
			word = "shortened"
		case b.retainFor > 0 && (a.retainFor == 0 || a.retainFor > b.retainFor):
			word = "lengthened"
		}
		out = append(out, fmt.Sprintf("bundle %s: retain %s from %s to %s", name, word, b.retain, a.retain))
	}
	if !slices.Equal(b.sources, a.sources) {
		out = append(out, fmt.Sprintf("bundle %s: sources changed from %s to %s", name, joinWords(b.sources), joinWords(a.sources)))
	}
	if b.target != a.target {
		out = append(out, fmt.Sprintf("bundle %s: target changed from %s to %s", name, b.target, a.target))
	}
	return out
}

// sortedNames returns the bundle names of either map, sorted.
func sortedNames(maps ...map[string]bundleSpec) []string {
	var out []string
	for _, m := range maps {
		for n := range m {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
