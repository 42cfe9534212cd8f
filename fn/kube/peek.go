package kube

import (
	"encoding/base64"
	"errors"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// pemHeader starts every PEM block.
const pemHeader = "-----BEGIN "

// errFound stops eachEntry at the first value that starts with a PEM
// header.
var errFound = errors.New("found")

// StartsWithPEM reports whether a value of node's data fields (as Values
// reads them) starts with a PEM header, reading only the first characters
// of each: for a base64 value, the first 16 (12 bytes), decoded. It is a
// shortcut for a caller that asks whether any value holds PEM: true means
// one does; false means the values must be read in full to tell (one may
// hold PEM later, be wrapped, or not decode).
func StartsWithPEM(node *yaml.RNode) bool {
	err := eachEntry(node, func(e entry) error {
		v := e.value
		if v.Kind != yaml.ScalarNode {
			return nil
		}
		s := v.Value
		if !e.base64 {
			if strings.HasPrefix(s, pemHeader) {
				return errFound
			}
			return nil
		}
		const chars = 16 // 12 bytes, enough for the header
		if len(s) < chars {
			return nil
		}
		var head [12]byte
		if n, err := base64.StdEncoding.Decode(head[:], []byte(s[:chars])); err == nil && strings.HasPrefix(string(head[:n]), pemHeader) {
			return errFound
		}
		return nil
	})
	return errors.Is(err, errFound)
}
