// Package helmpost runs the function as a Helm post-renderer: `helm
// install|upgrade|template --post-renderer` pipes the chart's rendered
// manifests (multi-document YAML) through an executable and applies what
// it writes. The documents go through the same rules as function mode,
// with the policy as the functionConfig, and come out as multi-document
// YAML in the order they came, new resources (a created target, an
// alerts PrometheusRule) after them.
//
// Nothing local-config is emitted: the policy never is (it is not among
// the documents), and a local-config object the chart renders (a
// snapshot, a policy) is input only - kustomize and kpt leave such
// objects out of what they apply too, and Helm would apply everything.
package helmpost

import (
	"bytes"
	"fmt"
	"io"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Process is the function: it edits rl.Items in place (adding new
// resources) and returns an error when the run failed.
type Process func(rl *framework.ResourceList) error

// Render reads the manifests Helm rendered from input, runs process with
// policy as the functionConfig, and writes the result to w - all of it,
// or nothing when process fails.
func Render(input []byte, policy *yaml.RNode, process Process, w io.Writer) error {
	r := &kio.ByteReader{Reader: bytes.NewReader(input), OmitReaderAnnotations: true, DisableUnwrapping: true, PreserveSeqIndent: false}
	items, err := r.Read()
	if err != nil {
		return fmt.Errorf("reading the manifests Helm rendered: %w", err)
	}
	rl := &framework.ResourceList{Items: items, FunctionConfig: policy}
	if err := process(rl); err != nil {
		return err
	}
	var out []*yaml.RNode
	for _, it := range rl.Items {
		if kube.IsLocalConfig(it) {
			continue
		}
		out = append(out, it)
	}
	var b bytes.Buffer
	bw := kio.ByteWriter{Writer: &b, ClearAnnotations: []string{
		kioutil.PathAnnotation, kioutil.LegacyPathAnnotation, kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation,
		kioutil.IdAnnotation, kioutil.LegacyIdAnnotation,
	}}
	if err := bw.Write(out); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}
