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
	for _, p := range base.Policies {
		before[p.Resource.id()] = p
	}
	var out []Change
	seen := map[string]bool{}
	for _, p := range head.Policies {
		seen[p.Resource.id()] = true
		b, ok := before[p.Resource.id()]
		if !ok {
			out = append(out, Change{Resource: p.Resource, Change: "policy added, with bundles " + bundleNames(p)})
			continue
		}
		for _, w := range bundleChanges(b.Bundles, p.Bundles) {
			out = append(out, Change{Resource: p.Resource, Change: w})
		}
	}
	for _, p := range base.Policies {
		if !seen[p.Resource.id()] {
			out = append(out, Change{Resource: p.Resource, Change: "policy removed, with bundles " + bundleNames(p)})
		}
	}
	return out
}

// bundleNames lists p's bundles.
func bundleNames(p policySpec) string {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range p.Bundles {
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
			out = append(out, fmt.Sprintf("bundle %s added (mode %s, target %s)", name, a.Mode, a.Target))
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
	if b.Mode != a.Mode {
		out = append(out, fmt.Sprintf("bundle %s: mode switched from %s to %s", name, b.Mode, a.Mode))
	}
	if b.Retain != a.Retain {
		word := "changed"
		switch {
		case a.RetainFor > 0 && (b.RetainFor == 0 || a.RetainFor < b.RetainFor):
			word = "shortened"
		case b.RetainFor > 0 && (a.RetainFor == 0 || a.RetainFor > b.RetainFor):
			word = "lengthened"
		}
		out = append(out, fmt.Sprintf("bundle %s: retain %s from %s to %s", name, word, b.Retain, a.Retain))
	}
	if !slices.Equal(b.Sources, a.Sources) {
		out = append(out, fmt.Sprintf("bundle %s: sources changed from %s to %s", name, joinWords(b.Sources), joinWords(a.Sources)))
	}
	if b.Target != a.Target {
		out = append(out, fmt.Sprintf("bundle %s: target changed from %s to %s", name, b.Target, a.Target))
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
