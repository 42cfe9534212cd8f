package kube

import "sigs.k8s.io/kustomize/kyaml/yaml"

// Index finds input objects by Key in constant time. Items marked as local
// config are not indexed. When the same key appears twice (two API groups,
// or a broken input), the first one wins and Duplicates reports it.
type Index struct {
	byKey      map[Key]*yaml.RNode
	byKind     map[string][]*yaml.RNode
	duplicates []Key
}

// NewIndex indexes items.
func NewIndex(items []*yaml.RNode) *Index {
	idx := &Index{byKey: make(map[Key]*yaml.RNode, len(items)), byKind: map[string][]*yaml.RNode{}}
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
	k := KeyOf(item)
	if _, ok := x.byKey[k]; ok {
		x.duplicates = append(x.duplicates, k)
		return
	}
	x.byKey[k] = item
	x.byKind[k.Kind] = append(x.byKind[k.Kind], item)
}

// Get returns the object with key k, or nil.
func (x *Index) Get(k Key) *yaml.RNode { return x.byKey[k] }

// Kind returns every indexed object of kind, in input order.
func (x *Index) Kind(kind string) []*yaml.RNode { return x.byKind[kind] }

// Duplicates returns the keys seen more than once.
func (x *Index) Duplicates() []Key { return x.duplicates }
