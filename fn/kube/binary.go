package kube

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// SetBinaryValue stores binary b under key as base64: in data on a Secret,
// in binaryData on a ConfigMap (whose data holds only UTF-8 text). A value
// of the same key in the other field (a Secret's stringData, a ConfigMap's
// data) is removed, since the API server rejects or lets it shadow the
// binary one. Nothing is written when the stored value is already b, so an
// unchanged render leaves the node byte-identical. It returns the field
// path written and whether anything changed.
func SetBinaryValue(node *yaml.RNode, key string, b []byte) (field string, changed bool, err error) {
	cur, found, err := Lookup(node, key)
	if err != nil {
		return "", false, err
	}
	field, other := "data", "stringData"
	if node.GetKind() != "Secret" {
		field, other = "binaryData", "data"
	}
	if found && bytes.Equal(cur.Bytes, b) && strings.HasPrefix(cur.Field, field+".") {
		return cur.Field, false, nil
	}
	if m := node.Field(other); m != nil && m.Value != nil && m.Value.YNode().Kind == yaml.MappingNode {
		if _, err := m.Value.Pipe(yaml.Clear(key)); err != nil {
			return "", false, fmt.Errorf("%s: remove %s.%s: %w", RefOf(node), other, key, err)
		}
		if len(m.Value.YNode().Content) == 0 {
			if _, err := node.Pipe(yaml.Clear(other)); err != nil {
				return "", false, fmt.Errorf("%s: remove empty %s: %w", RefOf(node), other, err)
			}
		}
	}
	value := yaml.NewStringRNode(base64.StdEncoding.EncodeToString(b))
	if err := node.PipeE(yaml.LookupCreate(yaml.MappingNode, field), yaml.SetField(key, value)); err != nil {
		return "", false, fmt.Errorf("%s: set %s.%s: %w", RefOf(node), field, key, err)
	}
	return field + "." + key, true, nil
}
