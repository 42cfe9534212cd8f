package clusterapi

import (
	"fmt"
	"strconv"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// errAt is a *kube.FieldError at path.
func errAt(path []string, format string, args ...any) error {
	return kube.FieldErrorf(kube.JoinPath(path), format, args...)
}

// readInt returns the integer at path; present is false when it is absent.
func readInt(obj *yaml.RNode, path []string) (value int, present bool, err error) {
	n, err := kube.NodeAt(obj, path)
	if err != nil || n == nil {
		return 0, false, err
	}
	y := n.YNode()
	if y.Kind != yaml.ScalarNode || y.ShortTag() != yaml.NodeTagInt {
		return 0, true, errAt(path, "must be a whole number")
	}
	v, err := strconv.Atoi(y.Value)
	if err != nil {
		return 0, true, errAt(path, "%q is not a whole number", y.Value)
	}
	return v, true, nil
}

// ensureMap returns the object at path, creating absent or null fields on
// the way as empty objects. Existing fields keep their comments and order;
// new fields go last.
func ensureMap(obj *yaml.RNode, path []string) (*yaml.RNode, error) {
	cur := obj
	for i, f := range path {
		if cur.YNode().Kind != yaml.MappingNode {
			return nil, errAt(path[:i], "must be an object")
		}
		m := cur.Field(f)
		switch {
		case m == nil || m.Value == nil:
			child := yaml.NewMapRNode(nil)
			if err := cur.PipeE(yaml.SetField(f, child)); err != nil {
				return nil, fmt.Errorf("%s: %w", kube.JoinPath(path[:i+1]), err)
			}
			cur = child
		case kube.IsNull(m.Value.YNode()):
			y := m.Value.YNode()
			y.Kind, y.Tag, y.Value, y.Style = yaml.MappingNode, yaml.NodeTagMap, "", 0
			cur = m.Value
		default:
			cur = m.Value
		}
	}
	if cur.YNode().Kind != yaml.MappingNode {
		return nil, errAt(path, "must be an object")
	}
	return cur, nil
}

// setScalar writes value with tag at path, creating the objects on the way.
// An existing scalar is edited in place so that its comments survive. It
// reports whether anything changed: a field that already holds the value
// is left byte-identical.
func setScalar(obj *yaml.RNode, path []string, value, tag string) (bool, error) {
	parent, err := ensureMap(obj, path[:len(path)-1])
	if err != nil {
		return false, err
	}
	name := path[len(path)-1]
	if m := parent.Field(name); m != nil && m.Value != nil && m.Value.YNode().Kind == yaml.ScalarNode {
		y := m.Value.YNode()
		if y.Value == value && y.ShortTag() == tag {
			return false, nil
		}
		y.Value, y.Tag, y.Style = value, tag, 0
		return true, nil
	}
	n := yaml.NewScalarRNode(value)
	n.YNode().Tag = tag
	if err := parent.PipeE(yaml.SetField(name, n)); err != nil {
		return false, fmt.Errorf("%s: %w", kube.JoinPath(path), err)
	}
	return true, nil
}

// setInt writes an integer at path (see setScalar).
func setInt(obj *yaml.RNode, path []string, v int) (bool, error) {
	return setScalar(obj, path, strconv.Itoa(v), yaml.NodeTagInt)
}
