package kube

import (
	"encoding/base64"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Value is one entry of a Secret's or ConfigMap's data.
type Value struct {
	// Key is the data key, such as "ca.crt".
	Key string
	// Field is the field path of the value, such as "data.ca.crt".
	Field string
	// Bytes is the decoded content.
	Bytes []byte
}

// Values returns every data entry of a Secret (data, base64-decoded, then
// stringData, which wins as it does in the API server) or a ConfigMap (data,
// then binaryData, base64-decoded), sorted by field order in the object.
// YAML aliases and merge keys are resolved as kubectl resolves them, so
// `ca.crt: *pem` reads the anchored PEM. A value that is not valid base64,
// a value that is a list or an object, or a data field that is not a map
// is a *FieldError naming the field.
func Values(node *yaml.RNode) ([]Value, error) {
	var out []Value
	seen := map[string]int{}
	err := eachEntry(node, func(e entry) error {
		v, err := e.decode()
		if err != nil {
			return err
		}
		if i, ok := seen[v.Key]; ok {
			out[i] = v
			return nil
		}
		seen[v.Key] = len(out)
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Lookup returns the value of key in node, by the rules of Values. found
// is false when the key is absent. Only the entries of key are decoded: a
// broken value under another key is not an error here.
func Lookup(node *yaml.RNode, key string) (v Value, found bool, err error) {
	err = eachEntry(node, func(e entry) error {
		if e.key != key {
			return nil
		}
		d, err := e.decode()
		if err != nil {
			return err
		}
		v, found = d, true
		return nil
	})
	if err != nil {
		return Value{}, false, err
	}
	return v, found, nil
}

// entry is one key of a data field, its value resolved through aliases.
type entry struct {
	field  string // "data", "stringData" or "binaryData"
	base64 bool
	key    string
	value  *yaml.Node
}

func (e entry) decode() (Value, error) {
	field := e.field + "." + e.key
	var s string
	switch v := e.value; {
	case IsNull(v):
		// `key:` or `key: null` reads as "" in the API server.
	case v.Kind == yaml.ScalarNode:
		s = v.Value
	default:
		return Value{}, &FieldError{Field: field, Err: fmt.Errorf("is a YAML %s, not a string", NodeKindName(v.Kind))}
	}
	if !e.base64 {
		return Value{Key: e.key, Field: field, Bytes: []byte(s)}, nil
	}
	b, err := DecodeBase64(s)
	if err != nil {
		return Value{}, &FieldError{Field: field, Err: fmt.Errorf("invalid base64: %w", err)}
	}
	return Value{Key: e.key, Field: field, Bytes: b}, nil
}

// eachEntry calls fn for every entry of node's data fields in the order
// Values documents, stopping at the first error.
func eachEntry(node *yaml.RNode, fn func(entry) error) error {
	secret := node.GetKind() == string(TargetSecret)
	fields := []struct {
		name   string
		base64 bool
	}{{"data", secret}, {"stringData", false}, {"binaryData", true}}
	for _, f := range fields {
		if f.name == "stringData" && !secret {
			continue // a Secret's only
		}
		m := node.Field(f.name)
		if m == nil || m.Value == nil {
			continue
		}
		y := resolveAlias(m.Value.YNode())
		if y == nil || IsNull(y) {
			continue
		}
		if y.Kind != yaml.MappingNode {
			return &FieldError{Field: f.name, Err: fmt.Errorf("is a YAML %s, not a map of keys to values", NodeKindName(y.Kind))}
		}
		pairs, err := mappingPairs(y)
		if err != nil {
			return &FieldError{Field: f.name, Err: err}
		}
		for _, p := range pairs {
			if err := fn(entry{field: f.name, base64: f.base64, key: p[0].Value, value: p[1]}); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxAliasChain bounds how many aliases resolveAlias follows. YAML cannot
// anchor an alias, so a real chain has length one; the bound only guards
// against a hand-built node graph.
const maxAliasChain = 64

// resolveAlias returns the node an alias refers to, or n itself.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxAliasChain; i++ {
		n = n.Alias
	}
	return n
}

// mappingPairs returns the key/value pairs of mapping m with aliases
// resolved and merge keys (`<<: *base`, `<<: [*a, *b]`) expanded as YAML
// 1.1 and kubectl define them: a key of m wins over a merged one, and an
// earlier merged mapping wins over a later one. Every mapping is expanded
// at most once, so a chain of merges costs time linear in its size.
func mappingPairs(m *yaml.Node) ([][2]*yaml.Node, error) {
	var out [][2]*yaml.Node
	have := map[string]bool{}
	expanded := map[*yaml.Node]bool{}
	var collect func(m *yaml.Node) error
	collect = func(m *yaml.Node) error {
		if expanded[m] {
			return nil
		}
		expanded[m] = true
		var merges []*yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := resolveAlias(m.Content[i]), resolveAlias(m.Content[i+1])
			if k == nil || v == nil {
				continue
			}
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("has a key that is a YAML %s, not a string", NodeKindName(k.Kind))
			}
			if k.ShortTag() == "!!merge" {
				merges = append(merges, v)
				continue
			}
			if !have[k.Value] {
				have[k.Value] = true
				out = append(out, [2]*yaml.Node{k, v})
			}
		}
		for _, v := range merges {
			sources := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				sources = v.Content
			}
			for _, src := range sources {
				src = resolveAlias(src)
				if src == nil {
					continue
				}
				if src.Kind != yaml.MappingNode {
					return fmt.Errorf("merges (<<) a YAML %s; a merge key takes a map or a list of maps", NodeKindName(src.Kind))
				}
				if err := collect(src); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := collect(m); err != nil {
		return nil, err
	}
	return out, nil
}

// DecodeBase64 decodes a base64 value by the API server's rule: the JSON
// it decodes holds a Secret's data and a ConfigMap's binaryData as []byte,
// which encoding/json (and its fork sigs.k8s.io/json) reads with
// base64.StdEncoding. That skips line breaks (\n, \r), so a value wrapped
// as kubectl and editors write it, in a YAML literal block, decodes; and
// it refuses a space or a tab, so does this: a plain YAML scalar continued
// on a second line folds the break into a space, and the API server
// refuses what such a manifest holds.
func DecodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(s)
}

// SetField sets key in mapping m to value as yaml.SetField does (an
// existing value keeps its position and quoting style), and keeps the
// comments of the value it replaces: `ca.crt: <old> # why` stays commented.
func SetField(m *yaml.RNode, key string, value *yaml.RNode) error {
	var head, line, foot string
	if f := m.Field(key); f != nil && f.Value != nil {
		y := f.Value.YNode()
		head, line, foot = y.HeadComment, y.LineComment, y.FootComment
	}
	if err := m.PipeE(yaml.SetField(key, value)); err != nil {
		return err
	}
	if f := m.Field(key); f != nil && f.Value != nil {
		y := f.Value.YNode()
		if y.HeadComment == "" {
			y.HeadComment = head
		}
		if y.LineComment == "" {
			y.LineComment = line
		}
		if y.FootComment == "" {
			y.FootComment = foot
		}
	}
	return nil
}

// RemoveKey deletes key from the mapping at field of node, and the mapping
// itself when that leaves it empty. An absent field or key is not an error.
func RemoveKey(node *yaml.RNode, field, key string) error {
	m := node.Field(field)
	if m == nil || m.Value == nil || m.Value.YNode().Kind != yaml.MappingNode || m.Value.Field(key) == nil {
		return nil
	}
	if _, err := m.Value.Pipe(yaml.Clear(key)); err != nil {
		return fmt.Errorf("%s: remove %s.%s: %w", RefOf(node), field, key, err)
	}
	if len(m.Value.YNode().Content) == 0 {
		if _, err := node.Pipe(yaml.Clear(field)); err != nil {
			return fmt.Errorf("%s: remove empty %s: %w", RefOf(node), field, err)
		}
	}
	return nil
}

// SetAnnotation sets metadata.annotations[key] = value unless it already has
// that value, and reports whether it changed anything. A new value is
// single-quoted and a replaced one keeps its quoting style and comments, as
// kyaml's setter would write them; unlike kyaml's, an `annotations: null`
// or empty `annotations: {}` (or metadata) is filled in place, keeping its
// position and comment, instead of being removed and appended at the end.
func SetAnnotation(node *yaml.RNode, key, value string) (bool, error) {
	if cur, ok := node.GetAnnotations(key)[key]; ok && cur == value {
		return false, nil
	}
	meta, err := MapField(node, yaml.MetadataField)
	if err != nil {
		return false, fmt.Errorf("%s: set annotation %s: %w", RefOf(node), key, err)
	}
	annotations, err := MapField(meta, yaml.AnnotationsField)
	if err != nil {
		return false, fmt.Errorf("%s: set annotation %s: metadata.%w", RefOf(node), key, err)
	}
	v := yaml.NewStringRNode(value)
	// Some tools misread the type of an unquoted annotation value.
	v.YNode().Style = yaml.SingleQuotedStyle
	if err := SetField(annotations, key, v); err != nil {
		return false, fmt.Errorf("%s: set annotation %s: %w", RefOf(node), key, err)
	}
	return true, nil
}

// MapField returns the mapping at field name of parent, appending an empty
// one when the field is absent. A null value (`name: null`, `name:`) is
// turned into an empty block mapping in place, and so is an empty flow
// mapping (`name: {}`): the field keeps its position and its line comment,
// which moves to the key (`name: # comment`), where a block mapping can
// carry it.
func MapField(parent *yaml.RNode, name string) (*yaml.RNode, error) {
	f := parent.Field(name)
	if f == nil || f.Value == nil {
		return parent.Pipe(yaml.LookupCreate(yaml.MappingNode, name))
	}
	y := f.Value.YNode()
	switch {
	case IsNull(y):
		y.Kind, y.Tag, y.Value, y.Style = yaml.MappingNode, yaml.NodeTagMap, "", 0
	case y.Kind == yaml.MappingNode && len(y.Content) == 0:
		y.Style = 0
	case y.Kind == yaml.MappingNode:
		return f.Value, nil
	default:
		return nil, fmt.Errorf("%s is not a mapping", name)
	}
	if k := f.Key.YNode(); k.LineComment == "" {
		k.LineComment = y.LineComment
	}
	y.LineComment = ""
	return f.Value, nil
}

// IsSOPSEncrypted reports whether node carries a top-level sops: block, the
// mark of a SOPS-encrypted manifest whose values are ciphertext.
func IsSOPSEncrypted(node *yaml.RNode) bool {
	return node.Field("sops") != nil
}
