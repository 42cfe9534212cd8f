package resio

import (
	"bytes"
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ReadPolicyFile reads the RotationPolicy of --policy FILE: exactly one
// YAML document (a second one is refused, not ignored), in which no
// mapping defines a key twice.
func ReadPolicyFile(path string) (*yaml.RNode, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading policy: %w", err)
	}
	if err := DuplicateKeysError(path, data); err != nil {
		return nil, fmt.Errorf("policy %w", err)
	}
	r := &kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true, DisableUnwrapping: true}
	nodes, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("reading policy %s: %w", path, err)
	}
	switch len(nodes) {
	case 1:
		return nodes[0], nil
	case 0:
		return nil, fmt.Errorf("policy %s holds no YAML document; --policy FILE must hold one RotationPolicy", path)
	default:
		return nil, fmt.Errorf("policy %s holds %d YAML documents; --policy FILE must hold one RotationPolicy, alone", path, len(nodes))
	}
}
