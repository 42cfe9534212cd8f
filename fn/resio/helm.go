package resio

import (
	"bytes"
	"fmt"
	"io"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ReadDocuments reads the multi-document YAML that `helm install|upgrade|
// template --post-renderer` pipes through an executable: every document a
// resource, in order, Lists not unwrapped, no annotation added.
func ReadDocuments(input []byte) (*Resources, error) {
	r := &kio.ByteReader{Reader: bytes.NewReader(input), OmitReaderAnnotations: true, DisableUnwrapping: true}
	items, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the manifests Helm rendered: %w", err)
	}
	return &Resources{Items: items}, nil
}

// WriteDocuments writes items as multi-document YAML, in their order, for
// Helm to apply: a local-config object (a snapshot, a policy the chart
// renders) is input only and is not written - kustomize and kpt leave such
// objects out of what they apply too, and Helm would apply everything -
// and neither are the path, index and id annotations.
func WriteDocuments(w io.Writer, items []*yaml.RNode) error {
	var out []*yaml.RNode
	for _, it := range items {
		if !kube.IsLocalConfig(it) {
			out = append(out, it)
		}
	}
	var b bytes.Buffer
	bw := kio.ByteWriter{Writer: &b, ClearAnnotations: fileKeys[:]}
	if err := bw.Write(out); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}
