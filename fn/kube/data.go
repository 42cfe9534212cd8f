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
// then binaryData, base64-decoded), sorted by field order in the object. A
// value that is not valid base64 is an error naming its field.
func Values(node *yaml.RNode) ([]Value, error) {
	var out []Value
	seen := map[string]int{}
	add := func(v Value) {
		if i, ok := seen[v.Key]; ok {
			out[i] = v
			return
		}
		seen[v.Key] = len(out)
		out = append(out, v)
	}
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
		if m == nil || m.Value == nil || m.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		content := m.Value.YNode().Content
		for i := 0; i+1 < len(content); i += 2 {
			key, val := content[i].Value, content[i+1].Value
			field := f.name + "." + key
			if !f.base64 {
				add(Value{Key: key, Field: field, Bytes: []byte(val)})
				continue
			}
			b, err := decodeBase64(val)
			if err != nil {
				return nil, &ValueError{Field: field, Err: fmt.Errorf("invalid base64: %w", err)}
			}
			add(Value{Key: key, Field: field, Bytes: b})
		}
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

// Lookup returns the value of key in node. found is false when the key is
// absent.
func Lookup(node *yaml.RNode, key string) (v Value, found bool, err error) {
	values, err := Values(node)
	if err != nil {
		return Value{}, false, err
	}
	for _, v := range values {
		if v.Key == key {
			return v, true, nil
		}
	}
	return Value{}, false, nil
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
