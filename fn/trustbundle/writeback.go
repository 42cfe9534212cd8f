package trustbundle

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The write-back rule: where a bundle's bytes go in a Secret or ConfigMap
// (data, stringData or binaryData) so that the API server accepts the
// object and a user's choice of readable stringData is kept.

// SetValue stores b under key. On a Secret it writes stringData when the key
// is already there (a user who keeps readable PEM keeps it), else data as
// base64. On a ConfigMap it writes data as a literal block, and removes a
// binaryData copy of the key: a PEM bundle is text, and the API server
// rejects a ConfigMap that holds one key in both. Nothing is written when
// the stored value is already b (in data, for a ConfigMap), so an unchanged
// render leaves the node byte-identical. A replaced value keeps its
// position, quoting style and comments. It returns the field path written
// and whether anything changed.
func SetValue(node *yaml.RNode, key string, b []byte) (field string, changed bool, err error) {
	cur, found, err := kube.Lookup(node, key)
	if err != nil {
		return "", false, err
	}
	configMap := node.GetKind() != string(kube.TargetSecret)
	inBinary := configMap && found && strings.HasPrefix(cur.Field, "binaryData.")
	if found && bytes.Equal(cur.Bytes, b) && !inBinary {
		return cur.Field, false, nil
	}
	var value *yaml.RNode
	switch {
	case !configMap && found && strings.HasPrefix(cur.Field, "stringData."):
		field = "stringData"
		value = literal(string(b))
	case !configMap:
		field = "data"
		value = yaml.NewStringRNode(base64.StdEncoding.EncodeToString(b))
	default:
		field = "data"
		value = literal(string(b))
	}
	m, err := kube.MapField(node, field)
	if err == nil {
		err = setUnaliased(node, m, key, value)
	}
	if err != nil {
		return "", false, fmt.Errorf("%s: set %s.%s: %w", kube.RefOf(node), field, key, err)
	}
	if configMap {
		if err := kube.RemoveKey(node, "binaryData", key); err != nil {
			return "", false, err
		}
	}
	return field + "." + key, true, nil
}

// setUnaliased sets key of mapping m (a data field of node) to value, as
// kube.SetField does, keeping the anchor of the value it replaces. A value
// whose anchor an alias of node uses is not replaced: the node is shared,
// so the alias would change with it, and the anchor would leave the
// output, leaving an alias that no tool can parse.
func setUnaliased(node, m *yaml.RNode, key string, value *yaml.RNode) error {
	var anchor string
	if f := m.Field(key); f != nil && f.Value != nil && f.Value.YNode().Anchor != "" {
		old := f.Value.YNode()
		if aliased(node.YNode(), old) {
			return fmt.Errorf("the value is YAML anchor &%s, which another value aliases; a new bundle there would change that value too - write the value out in full instead of the anchor", old.Anchor)
		}
		anchor = old.Anchor
	}
	if err := kube.SetField(m, key, value); err != nil {
		return err
	}
	if anchor != "" {
		m.Field(key).Value.YNode().Anchor = anchor
	}
	return nil
}

// aliased reports whether an alias under n refers to target.
func aliased(n, target *yaml.Node) bool {
	if n == nil {
		return false
	}
	if n.Kind == yaml.AliasNode {
		return n.Alias == target
	}
	for _, c := range n.Content {
		if aliased(c, target) {
			return true
		}
	}
	return false
}

func literal(s string) *yaml.RNode {
	n := yaml.NewStringRNode(s)
	if strings.Contains(s, "\n") {
		n.YNode().Style = yaml.LiteralStyle
	}
	return n
}

// setBinaryValue stores binary b under key as base64: in data on a Secret,
// in binaryData on a ConfigMap (whose data holds only UTF-8 text). A value
// of the same key in the other field (a Secret's stringData, a ConfigMap's
// data) is removed, since the API server rejects or lets it shadow the
// binary one. Nothing is written when the stored value is already b, so an
// unchanged render leaves the node byte-identical. It returns the field
// path written and whether anything changed.
func setBinaryValue(node *yaml.RNode, key string, b []byte) (field string, changed bool, err error) {
	cur, found, err := kube.Lookup(node, key)
	if err != nil {
		return "", false, err
	}
	field, other := "data", "stringData"
	if node.GetKind() != string(kube.TargetSecret) {
		field, other = "binaryData", "data"
	}
	if found && bytes.Equal(cur.Bytes, b) && strings.HasPrefix(cur.Field, field+".") {
		return cur.Field, false, nil
	}
	if m := node.Field(other); m != nil && m.Value != nil && m.Value.YNode().Kind == yaml.MappingNode {
		if _, err := m.Value.Pipe(yaml.Clear(key)); err != nil {
			return "", false, fmt.Errorf("%s: remove %s.%s: %w", kube.RefOf(node), other, key, err)
		}
		if len(m.Value.YNode().Content) == 0 {
			if _, err := node.Pipe(yaml.Clear(other)); err != nil {
				return "", false, fmt.Errorf("%s: remove empty %s: %w", kube.RefOf(node), other, err)
			}
		}
	}
	value := yaml.NewStringRNode(base64.StdEncoding.EncodeToString(b))
	if err := node.PipeE(yaml.LookupCreate(yaml.MappingNode, field), yaml.SetField(key, value)); err != nil {
		return "", false, fmt.Errorf("%s: set %s.%s: %w", kube.RefOf(node), field, key, err)
	}
	return field + "." + key, true, nil
}
