package kube

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Index finds input objects by API group and Key in constant time. Items
// marked as local config are not indexed. The API group is part of the
// identity: an example.com/v1 Secret never stands in for the core v1
// Secret of the same name, and a Cluster API Cluster and an EKS Anywhere
// Cluster of one name are two objects. When the same group and key appear
// twice (a broken input), the first one wins and Duplicates reports it.
// Objects are keyed by the target-kind table the index was made with
// (TargetTable.KeyOf), whose rows say which kinds are cluster-scoped.
type Index struct {
	byKey      map[groupKey]*yaml.RNode
	byKind     map[GroupKind][]*yaml.RNode
	duplicates []Key
	targets    TargetTable
}

type groupKey struct {
	group string
	key   Key
}

// NewIndex indexes items by the target-kind table rotate-certs ships.
func NewIndex(items []*yaml.RNode) *Index { return NewIndexWith(items, TargetKinds()) }

// NewIndexWith indexes items by the target-kind table targets: tests add
// a kind with it.
func NewIndexWith(items []*yaml.RNode, targets TargetTable) *Index {
	idx := &Index{
		byKey:   make(map[groupKey]*yaml.RNode, len(items)),
		byKind:  map[GroupKind][]*yaml.RNode{},
		targets: targets,
	}
	for _, item := range items {
		idx.Add(item)
	}
	return idx
}

// Add indexes one more object (a resource the function creates).
func (x *Index) Add(item *yaml.RNode) {
	if IsLocalConfig(item) {
		return
	}
	k := x.targets.keyOf(item)
	g := GroupOf(item.GetApiVersion())
	if _, ok := x.byKey[groupKey{g, k}]; ok {
		x.duplicates = append(x.duplicates, k)
		return
	}
	x.byKey[groupKey{g, k}] = item
	x.byKind[GroupKind{g, k.Kind}] = append(x.byKind[GroupKind{g, k.Kind}], item)
}

// Targets returns the target-kind table the index keys objects by.
func (x *Index) Targets() TargetTable { return x.targets }

// KeyOf returns the key of node as the index keys it.
func (x *Index) KeyOf(node *yaml.RNode) Key { return x.targets.keyOf(node) }

// Get returns the core-group object (apiVersion v1) with key k, or nil.
// Every object rotate-certs looks up by name - a source or target Secret
// or ConfigMap, a Namespace - lives in the core group; use GetIn for
// another group.
func (x *Index) Get(k Key) *yaml.RNode { return x.byKey[groupKey{"", k}] }

// GetIn returns the object of API group group ("" for core,
// "monitoring.coreos.com", ...) with key k, or nil.
func (x *Index) GetIn(group string, k Key) *yaml.RNode { return x.byKey[groupKey{group, k}] }

// Kind returns every indexed core-group object of kind, in input order.
func (x *Index) Kind(kind string) []*yaml.RNode { return x.byKind[GroupKind{"", kind}] }

// Duplicates returns the keys seen more than once in one API group.
func (x *Index) Duplicates() []Key { return x.duplicates }

// GroupOf returns the API group of apiVersion: "" for the core group
// ("v1"), "apps" for "apps/v1".
func GroupOf(apiVersion string) string {
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		return ""
	}
	return group
}

// KindIn returns every indexed object of API group group and kind, in
// input order.
func (x *Index) KindIn(group, kind string) []*yaml.RNode { return x.byKind[GroupKind{group, kind}] }
