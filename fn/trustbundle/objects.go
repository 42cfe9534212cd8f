package trustbundle

import (
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Finish completes the render of every bundle of a policy, in place: for
// each target object it writes the bundle-hash and rotated-at annotations
// over every bundle that writes the object, and completes each target's
// Changed flag and info result. It returns errors for what only the whole
// render shows: a target object that appears more than once in items, and
// one key of an object written by two bundles (namespace selectors that
// overlap).
//
// The annotations belong to the object, not to a bundle. When one bundle
// writes the object, bundle-hash is "sha256:" + hex of its rendered PEM
// (Target.Hash). When several bundles write different keys of it,
// bundle-hash is "sha256:" + hex of the lines "<key> <hash>\n", one per
// bundle, sorted by key, and rotated-at is the latest of theirs: both are
// the same whichever bundle rendered last, so a render that changes no key
// leaves the object byte-identical.
//
// items are the input's items, without the targets the render created;
// positions[i] is the input-list index of items[i] (nil: the same), for
// messages that name an item by position.
func Finish(rendered []Rendered, items []*yaml.RNode, positions []int, index *kube.Index) framework.Results {
	var results framework.Results
	var order []*yaml.RNode
	byNode := map[*yaml.RNode][]*Target{}
	for i := range rendered {
		for j := range rendered[i].Targets {
			t := &rendered[i].Targets[j]
			if t.Node == nil || t.summary == nil {
				continue
			}
			if _, ok := byNode[t.Node]; !ok {
				order = append(order, t.Node)
			}
			byNode[t.Node] = append(byNode[t.Node], t)
		}
	}
	results = append(results, duplicateTargets(order, byNode, items, positions, index)...)
	for _, node := range order {
		targets := byNode[node]
		if res := sharedKeys(node, targets); res != nil {
			results = append(results, res)
			continue
		}
		if msg := conflictingMetadata(targets); msg != "" {
			results = append(results, kube.RefOf(node).Result(framework.Error, "metadata", msg))
			continue
		}
		if err := annotate(node, targets); err != nil {
			results = append(results, kube.RefOf(node).Result(framework.Error, "metadata.annotations", err.Error()))
		}
	}
	return results
}

// annotate writes the object's annotations (and the targets' static
// metadata) and completes its targets.
func annotate(node *yaml.RNode, targets []*Target) error {
	memChanged, err := writeMemory(node, targets)
	if err != nil {
		return err
	}
	metaChanged, err := setMetadata(node, targets)
	if err != nil {
		return err
	}
	meta := memChanged || metaChanged
	anyData := false
	for _, t := range targets {
		anyData = anyData || t.dataChanged || t.Created
	}
	// A bundle whose key did not change reports "unchanged" even when
	// another bundle's change moved the object's annotations; when no key
	// changed, the annotations and labels alone (adoption, the memory of a
	// Copy-mode render, static metadata) are every bundle's change.
	for _, t := range targets {
		t.Changed = t.dataChanged || t.Created || (meta && !anyData)
		t.summary.Message = t.summaryText + changeWord(*t)
	}
	return nil
}

// sharedKeys returns an error when two bundles write one key or field of
// node. The policy rejects that for listed namespaces and inject lists;
// namespace selectors can still overlap, and an object's inject-ca-from
// annotation can name one bundle while another lists it: the two bundles
// would overwrite each other on every render.
func sharedKeys(node *yaml.RNode, targets []*Target) *framework.Result {
	owner := map[string]*Target{}
	for _, t := range targets {
		for _, k := range t.keys {
			other, dup := owner[k]
			if !dup {
				owner[k] = t
				continue
			}
			ref := kube.RefOf(node)
			if kube.GroupOf(ref.APIVersion) != "" {
				return ref.Result(framework.Error, k, fmt.Sprintf(
					"bundles %q and %q both write %s of %s (one lists it in inject, the other is named by its %s annotation, or both): each would overwrite the other - keep one",
					other.bundle, t.bundle, k, ref, policy.InjectAnnotation))
			}
			return ref.Result(framework.Error, dataFieldOf(node, k), fmt.Sprintf(
				"bundles %q and %q both write key %s of %s (a namespaceSelector selects a namespace the other bundle also writes): each would overwrite the other - give one of them another target name or key",
				other.bundle, t.bundle, k, ref))
		}
	}
	return nil
}

// dataFieldOf returns the field path of key in node, "data.<key>" when
// absent.
func dataFieldOf(node *yaml.RNode, key string) string {
	if v, found, err := kube.Lookup(node, key); err == nil && found {
		return v.Field
	}
	return "data." + key
}

// duplicateTargets returns an error for every target object that appears
// more than once in items. kpt and `render` read a package file by file
// and allow that; kustomize would reject it. Only the first copy is read
// and written, the others keep the stale bundle, and which copy the
// cluster ends up with depends on the apply order: the outage a trust
// bundle exists to prevent. Items are scanned only when the index saw a
// duplicate of some target's key.
func duplicateTargets(order []*yaml.RNode, byNode map[*yaml.RNode][]*Target, items []*yaml.RNode, positions []int, index *kube.Index) framework.Results {
	if index == nil || len(index.Duplicates()) == 0 {
		return nil
	}
	dup := map[kube.Key]bool{}
	for _, k := range index.Duplicates() {
		dup[k] = true
	}
	wanted := map[kube.Key]string{} // key -> API group of the target
	for _, node := range order {
		if k := index.KeyOf(node); dup[k] {
			wanted[k] = kube.GroupOf(node.GetApiVersion())
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	copies := map[kube.Key][]string{}
	for i, item := range items {
		if kube.IsLocalConfig(item) {
			continue
		}
		k := index.KeyOf(item)
		if g, ok := wanted[k]; !ok || kube.GroupOf(item.GetApiVersion()) != g {
			continue
		}
		where := fmt.Sprintf("items[%d]", kube.Position(positions, i))
		if p, idx := kube.FileOf(item); p != "" {
			where = fmt.Sprintf("%s (index %d)", p, idx)
		}
		copies[k] = append(copies[k], where)
	}
	var out framework.Results
	for _, node := range order {
		k := index.KeyOf(node)
		if len(copies[k]) < 2 {
			continue
		}
		for _, t := range byNode[node] {
			out = append(out, kube.RefOf(node).Result(framework.Error, t.field, fmt.Sprintf(
				"bundle %q: target %s appears %d times in the input: %s; only one copy could be updated, the other would keep a stale bundle, and which one the cluster gets depends on the apply order - keep one copy of the object",
				t.bundle, k, len(copies[k]), strings.Join(copies[k], ", "))))
		}
	}
	return out
}
