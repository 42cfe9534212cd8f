package kube

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

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
// is a *ValueError naming the field.
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
	case v.Kind == yaml.ScalarNode && v.ShortTag() == yaml.NodeTagNull:
		// `key:` or `key: null` reads as "" in the API server.
	case v.Kind == yaml.ScalarNode:
		s = v.Value
	default:
		return Value{}, &ValueError{Field: field, Err: fmt.Errorf("is a YAML %s, not a string", NodeKindName(v.Kind))}
	}
	if !e.base64 {
		return Value{Key: e.key, Field: field, Bytes: []byte(s)}, nil
	}
	b, err := decodeBase64(s)
	if err != nil {
		return Value{}, &ValueError{Field: field, Err: fmt.Errorf("invalid base64: %w", err)}
	}
	return Value{Key: e.key, Field: field, Bytes: b}, nil
}

// eachEntry calls fn for every entry of node's data fields in the order
// Values documents, stopping at the first error.
func eachEntry(node *yaml.RNode, fn func(entry) error) error {
	fields := []struct {
		name   string
		base64 bool
	}{{"data", node.GetKind() == "Secret"}, {"stringData", false}, {"binaryData", true}}
	if node.GetKind() != "Secret" {
		fields[1].name = ""
	}
	for _, f := range fields {
		if f.name == "" {
			continue
		}
		m := node.Field(f.name)
		if m == nil || m.Value == nil {
			continue
		}
		y := resolveAlias(m.Value.YNode())
		if y == nil || y.Kind == yaml.ScalarNode && y.ShortTag() == yaml.NodeTagNull {
			continue
		}
		if y.Kind != yaml.MappingNode {
			return &ValueError{Field: f.name, Err: fmt.Errorf("is a YAML %s, not a map of keys to values", NodeKindName(y.Kind))}
		}
		pairs, err := mappingPairs(y)
		if err != nil {
			return &ValueError{Field: f.name, Err: err}
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

// ValueError is a data value that cannot be read, with its field path.
type ValueError struct {
	// Field is the field path, such as "data.ca.crt".
	Field string
	// Err says what is wrong.
	Err error
}

// Error returns "field: problem".
func (e *ValueError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *ValueError) Unwrap() error { return e.Err }

// FieldOf returns the field path of a *ValueError, or "".
func FieldOf(err error) string {
	var ve *ValueError
	if errors.As(err, &ve) {
		return ve.Field
	}
	return ""
}

// decodeBase64 accepts standard base64 with or without line breaks, as
// kubectl and editors write it.
func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	return base64.StdEncoding.DecodeString(s)
}

// SetValue stores b under key. On a Secret it writes stringData when the key
// is already there (a user who keeps readable PEM keeps it), else data as
// base64. On a ConfigMap it writes data as a literal block. Nothing is
// written when the stored value is already b, so an unchanged render leaves
// the node byte-identical. It returns the field path written and whether
// anything changed.
func SetValue(node *yaml.RNode, key string, b []byte) (field string, changed bool, err error) {
	cur, found, err := Lookup(node, key)
	if err != nil {
		return "", false, err
	}
	if found && bytes.Equal(cur.Bytes, b) {
		return cur.Field, false, nil
	}
	var value *yaml.RNode
	switch {
	case node.GetKind() == "Secret" && found && strings.HasPrefix(cur.Field, "stringData."):
		field = "stringData"
		value = literal(string(b))
	case node.GetKind() == "Secret":
		field = "data"
		value = yaml.NewStringRNode(base64.StdEncoding.EncodeToString(b))
	default:
		field = "data"
		value = literal(string(b))
	}
	if err := node.PipeE(yaml.LookupCreate(yaml.MappingNode, field), yaml.SetField(key, value)); err != nil {
		return "", false, fmt.Errorf("%s: set %s.%s: %w", RefOf(node), field, key, err)
	}
	return field + "." + key, true, nil
}

func literal(s string) *yaml.RNode {
	n := yaml.NewStringRNode(s)
	if strings.Contains(s, "\n") {
		n.YNode().Style = yaml.LiteralStyle
	}
	return n
}

// SetAnnotation sets metadata.annotations[key] = value unless it already has
// that value, and reports whether it changed anything.
func SetAnnotation(node *yaml.RNode, key, value string) (bool, error) {
	if cur, ok := node.GetAnnotations(key)[key]; ok && cur == value {
		return false, nil
	}
	if err := node.PipeE(yaml.SetAnnotation(key, value)); err != nil {
		return false, fmt.Errorf("%s: set annotation %s: %w", RefOf(node), key, err)
	}
	return true, nil
}

// IsSOPSEncrypted reports whether node carries a top-level sops: block, the
// mark of a SOPS-encrypted manifest whose values are ciphertext.
func IsSOPSEncrypted(node *yaml.RNode) bool {
	return node.Field("sops") != nil
}
