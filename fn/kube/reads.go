package kube

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// GroupKind is a kind of an API group ("" for the core group).
type GroupKind struct {
	Group string
	Kind  string
}

// GroupKindOf returns the API group and kind of item.
func GroupKindOf(item *yaml.RNode) GroupKind {
	return GroupKind{Group: GroupOf(item.GetApiVersion()), Kind: item.GetKind()}
}

// Reads declares what one package of the function reads of the input. Each
// package that reads items keeps its declaration next to the code that
// reads them (its reads.go); the function's read plan is the union of the
// declarations (Union). In function mode an item the plan declines is
// never parsed: no step sees it.
type Reads struct {
	// Kinds are read whole: every item of each.
	Kinds []GroupKind
	// Groups are API groups read whole: every item of every kind.
	Groups []string
	// GroupSuffixes read whole every API group whose name ends with one
	// of them ("cluster.x-k8s.io" reads "controlplane.cluster.x-k8s.io").
	GroupSuffixes []string
	// KindSuffixes read whole every kind, of any group, whose name ends
	// with one of them ("Template").
	KindSuffixes []string
	// Some are kinds of which only some items are read, each with the rule
	// that says which.
	Some []ItemRule
	// EveryKind reads, of every kind the plan reads only in part, the
	// items it accepts: a rule about items of any kind (the processor's
	// refusals). Nil reads none; it is asked as the rules of Some are.
	EveryKind func(item *yaml.RNode) bool
}

// ItemRule says which items of one kind are read.
type ItemRule struct {
	GroupKind
	// Selects reports whether item is read. It is asked only about an
	// item whose metadata CheckShape accepts: kyaml's accessors of names,
	// labels and annotations panic on any other.
	Selects func(item *yaml.RNode) bool
}

// ReadPlan is what a union of declarations reads (function mode's read
// plan): see Union.
type ReadPlan struct {
	kinds         map[GroupKind]*kindPlan
	groups        map[string]bool
	groupSuffixes []string
	kindSuffixes  []string
	everyKind     []func(*yaml.RNode) bool
}

// kindPlan is what the plan reads of one kind named in a declaration:
// every item, or those one of rules reads.
type kindPlan struct {
	whole bool
	rules []func(*yaml.RNode) bool
}

// Union returns the plan that reads what any of reads declares. A kind
// that one declaration reads whole is read whole; of a kind that every
// declaration naming it reads only in part, an item is read when one of
// their rules reads it (those of Some in the order of reads, then those
// of EveryKind), and so is every item whose metadata CheckShape refuses:
// no rule can look at it, and whoever reads its kind must see it to
// refuse it.
func Union(reads ...Reads) *ReadPlan {
	p := &ReadPlan{kinds: map[GroupKind]*kindPlan{}, groups: map[string]bool{}}
	for _, r := range reads {
		for _, g := range r.Groups {
			p.groups[g] = true
		}
		p.groupSuffixes = append(p.groupSuffixes, r.GroupSuffixes...)
		p.kindSuffixes = append(p.kindSuffixes, r.KindSuffixes...)
		for _, gk := range r.Kinds {
			p.kind(gk).whole = true
		}
		if r.EveryKind != nil {
			p.everyKind = append(p.everyKind, r.EveryKind)
		}
		for _, rule := range r.Some {
			k := p.kind(rule.GroupKind)
			k.rules = append(k.rules, rule.Selects)
		}
	}
	for gk, k := range p.kinds {
		k.whole = k.whole || p.wholly(gk.Group, gk.Kind)
	}
	return p
}

// kind returns the plan of gk, added empty when it has none.
func (p *ReadPlan) kind(gk GroupKind) *kindPlan {
	if p.kinds[gk] == nil {
		p.kinds[gk] = &kindPlan{}
	}
	return p.kinds[gk]
}

// wholly reports whether group or kind is read whole by its name: the
// group is one of Groups, or ends with a group suffix, or the kind ends
// with a kind suffix.
func (p *ReadPlan) wholly(group, kind string) bool {
	if p.groups[group] {
		return true
	}
	for _, s := range p.groupSuffixes {
		if strings.HasSuffix(group, s) {
			return true
		}
	}
	for _, s := range p.kindSuffixes {
		if strings.HasSuffix(kind, s) {
			return true
		}
	}
	return false
}

// Kind reports whether the plan reads any item of this apiVersion and
// kind. No declaration reads an item without a kind.
func (p *ReadPlan) Kind(apiVersion, kind string) bool {
	if kind == "" {
		return false
	}
	group := GroupOf(apiVersion)
	return p.kinds[GroupKind{group, kind}] != nil || p.wholly(group, kind)
}

// Item reports whether the plan reads item, of a kind that Kind accepts.
func (p *ReadPlan) Item(item *yaml.RNode) bool {
	k := p.kinds[GroupKindOf(item)]
	if k == nil || k.whole {
		return true
	}
	if CheckShape(item, "") != nil {
		return true
	}
	for _, rules := range [2][]func(*yaml.RNode) bool{k.rules, p.everyKind} {
		for _, read := range rules {
			if read(item) {
				return true
			}
		}
	}
	return false
}
