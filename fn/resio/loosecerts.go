package resio

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Documents that are no Kubernetes object (chart values, a program's test
// input, configuration) are not read as objects; certificate or key
// material in them is still listed, as a certificate file no build reads
// is (CertFiles): a change to it is named, never judged, never shown.

// looseCertFile is the CertFile of file path for the certificate and key
// material its documents that are no object hold (docs): the values that
// carry PEM armour, as written or base64-encoded at any alignment
// (pki.CarriesPEM); ok false when they hold none. Its digest is of that
// material alone, in document order: a change elsewhere in the file is no
// change of it.
func looseCertFile(path string, docs []*yaml.RNode) (CertFile, bool) {
	h := sha256.New()
	found := false
	for _, d := range docs {
		walkScalars(d.YNode(), func(v string) {
			if pki.CarriesPEM(v) {
				h.Write([]byte(v))
				h.Write([]byte{0})
				found = true
			}
		})
	}
	if !found {
		return CertFile{}, false
	}
	return CertFile{Path: filepath.ToSlash(path), SHA256: hex.EncodeToString(h.Sum(nil))}, true
}

// walkScalars calls f with the value of every scalar below n, keys aside.
func walkScalars(n *yaml.Node, f func(string)) {
	switch n.Kind {
	case yaml.ScalarNode:
		f(n.Value)
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			walkScalars(n.Content[i], f)
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			walkScalars(c, f)
		}
	}
}
