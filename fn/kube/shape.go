package kube

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// CheckShape returns a *ValueError naming the field when node is not a
// mapping, or when its metadata, metadata.labels or metadata.annotations is
// present but not a mapping. kyaml's accessors (GetName, GetLabels,
// GetAnnotations, ...) read such nodes as mappings and panic on a list;
// every node they are used on must pass this check first. A null value
// counts as absent, and so does an alias (kyaml reads it as empty without
// failing). prefix is prepended to the field paths ("" for an
// item, "spec.template" for a pod template).
func CheckShape(node *yaml.RNode, prefix string) error {
	field := func(f string) string {
		if prefix == "" {
			return f
		}
		if f == "" {
			return prefix
		}
		return prefix + "." + f
	}
	if k := node.YNode().Kind; k != yaml.MappingNode {
		return &ValueError{Field: field(""), Err: fmt.Errorf("is a YAML %s, not an object", NodeKindName(k))}
	}
	meta := node.Field(yaml.MetadataField)
	if meta == nil || meta.Value.IsTaggedNull() {
		return nil
	}
	if k := meta.Value.YNode().Kind; k != yaml.MappingNode && k != yaml.AliasNode {
		return &ValueError{Field: field("metadata"), Err: fmt.Errorf("is a YAML %s, not an object", NodeKindName(k))}
	}
	for _, name := range []string{yaml.LabelsField, yaml.AnnotationsField} {
		f := meta.Value.Field(name)
		if f == nil || f.Value.IsTaggedNull() {
			continue
		}
		if k := f.Value.YNode().Kind; k != yaml.MappingNode && k != yaml.AliasNode {
			return &ValueError{Field: field("metadata." + name), Err: fmt.Errorf("is a YAML %s, not a map of strings", NodeKindName(k))}
		}
	}
	return nil
}

// NodeKindName names a YAML node kind for messages: "object", "list",
// "scalar", ...
func NodeKindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	default:
		return "node"
	}
}

// Position is the index in the input list of the function's item i, given
// the positions its caller passed (nil when the function sees every item).
func Position(positions []int, i int) int {
	if positions == nil {
		return i
	}
	return positions[i]
}
