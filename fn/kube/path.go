package kube

import "sigs.k8s.io/kustomize/kyaml/yaml"

// NodeAt returns the node at path in obj, or nil when a field on the way
// is absent or null. A field on the way that is not an object is a
// *FieldError naming it.
func NodeAt(obj *yaml.RNode, path []string) (*yaml.RNode, error) {
	cur := obj
	for i, f := range path {
		if cur.YNode().Kind != yaml.MappingNode {
			return nil, FieldErrorf(JoinPath(path[:i]), "must be an object")
		}
		m := cur.Field(f)
		if m == nil || m.Value == nil || IsNull(m.Value.YNode()) {
			return nil, nil
		}
		cur = m.Value
	}
	return cur, nil
}

// StringAt returns the scalar at path in obj as written, "" when absent
// (see NodeAt); a value that is not a scalar is a *FieldError.
func StringAt(obj *yaml.RNode, path []string) (string, error) {
	n, err := NodeAt(obj, path)
	if err != nil || n == nil {
		return "", err
	}
	if n.YNode().Kind != yaml.ScalarNode {
		return "", FieldErrorf(JoinPath(path), "must be a string")
	}
	return n.YNode().Value, nil
}

// IsNull reports whether n is a YAML null.
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == yaml.NodeTagNull
}

// At returns the node at path in node, or nil when any step is absent,
// not a mapping, or null: NodeAt for a reader that treats a misshapen
// field as absent. It walks the yaml.Node content directly: the restart
// rules run it for every field of every workload, and a kyaml PathGetter
// per step costs several allocations.
func At(node *yaml.RNode, path ...string) *yaml.RNode {
	n := node.YNode()
	for _, key := range path {
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			n = n.Content[0]
		}
		if n = MapValue(n, key); n == nil {
			return nil
		}
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Tag == yaml.NodeTagNull {
		return nil
	}
	return yaml.NewRNode(n)
}

// TrueAt reports whether the field at path (see At) is a boolean the API
// server receives as true (BoolAt).
func TrueAt(node *yaml.RNode, path ...string) bool {
	v, _ := BoolAt(node, path...)
	return v
}

// ScalarAt returns the scalar at path in node as written (see At: an alias
// at the end is followed, a null is absent), "" when absent or not a
// scalar.
func ScalarAt(node *yaml.RNode, path ...string) string {
	n := At(node, path...)
	if n == nil || n.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return n.YNode().Value
}

// BoolAt reads the boolean at path in node (see At) as kubectl, Helm,
// Argo CD and Flux read YAML (sigs.k8s.io/yaml, YAML 1.1 booleans): a
// plain true, True, TRUE, yes, on or y is true, their false forms false.
// set is false for anything else - absent, null, quoted, a block scalar
// or tagged as another type than !!bool (a string, which the API server
// refuses for a boolean field) or not a boolean.
func BoolAt(node *yaml.RNode, path ...string) (value, set bool) {
	n := At(node, path...)
	if n == nil {
		return false, false
	}
	y := n.YNode()
	quoted := y.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0
	tagged := y.Style&yaml.TaggedStyle != 0 && y.ShortTag() != yaml.NodeTagBool // `!!str yes`; `!!bool yes` is a boolean
	if y.Kind != yaml.ScalarNode || quoted || tagged {
		return false, false
	}
	switch y.Value {
	case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y":
		return true, true
	case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N":
		return false, true
	}
	return false, false
}
