package kube

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// CheckShape returns a *FieldError naming the field when node is not a
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
	bad := badShape(node.YNode())
	switch bad {
	case shapeOK:
		return nil
	case shapeItem:
		return &FieldError{Field: field(""), Err: fmt.Errorf("is a YAML %s, not an object", NodeKindName(node.YNode().Kind))}
	}
	meta := MapValue(node.YNode(), yaml.MetadataField)
	if bad == shapeMetadata {
		return &FieldError{Field: field("metadata"), Err: fmt.Errorf("is a YAML %s, not an object", NodeKindName(meta.Kind))}
	}
	name := yaml.LabelsField
	if bad == shapeAnnotations {
		name = yaml.AnnotationsField
	}
	return &FieldError{Field: field("metadata." + name), Err: fmt.Errorf("is a YAML %s, not a map of strings", NodeKindName(MapValue(meta, name).Kind))}
}

// What badShape finds wrong.
const (
	shapeOK = iota
	shapeItem
	shapeMetadata
	shapeLabels
	shapeAnnotations
)

// badShape is CheckShape without messages or allocations: RefOf asks it
// for every resource a message names.
func badShape(n *yaml.Node) int {
	if n == nil || n.Kind != yaml.MappingNode {
		return shapeItem
	}
	meta := MapValue(n, yaml.MetadataField)
	if meta == nil || IsNull(meta) {
		return shapeOK
	}
	if meta.Kind != yaml.MappingNode && meta.Kind != yaml.AliasNode {
		return shapeMetadata
	}
	for i, name := range []string{yaml.LabelsField, yaml.AnnotationsField} {
		if v := MapValue(meta, name); v != nil && !IsNull(v) && v.Kind != yaml.MappingNode && v.Kind != yaml.AliasNode {
			return shapeLabels + i
		}
	}
	return shapeOK
}

// MapValue returns the value of key in mapping n (the first, as kyaml
// reads it), or nil.
func MapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
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
// i must be an item of the input, not one the run added.
func Position(positions []int, i int) int {
	if positions == nil {
		return i
	}
	return positions[i]
}
