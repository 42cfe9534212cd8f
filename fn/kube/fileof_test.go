package kube

import (
	"strconv"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestFileOfReadsAsKyaml holds fileOf, which walks the node, to kyaml's
// GetAnnotations, which it replaced on the hot path: the same path and
// index for every shape RefOf reads (GetAnnotations asked for the four
// keys, as fileOf did, reads the first of each).
func TestFileOfReadsAsKyaml(t *testing.T) {
	for _, text := range []string{
		"kind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    internal.config.kubernetes.io/path: a.yaml\n    internal.config.kubernetes.io/index: '2'\n",
		"kind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/path: legacy.yaml\n    config.kubernetes.io/index: '3'\n",
		"kind: ConfigMap\nmetadata:\n  annotations:\n    config.kubernetes.io/path: legacy.yaml\n    internal.config.kubernetes.io/path: new.yaml\n    internal.config.kubernetes.io/index: x\n",
		"kind: ConfigMap\nmetadata:\n  annotations:\n    internal.config.kubernetes.io/path: first.yaml\n    internal.config.kubernetes.io/path: second.yaml\n",
		"kind: ConfigMap\nmetadata:\n  annotations:\n    internal.config.kubernetes.io/path: ''\n    config.kubernetes.io/path: legacy.yaml\n",
		"kind: ConfigMap\nmetadata:\n  name: a\n",
		"kind: ConfigMap\nmetadata:\n  annotations: {}\n",
		"kind: ConfigMap\nmetadata:\n  annotations:\n    internal.config.kubernetes.io/path: a.yaml\n  annotations:\n    internal.config.kubernetes.io/path: b.yaml\n",
		"kind: ConfigMap\n",
	} {
		node, err := yaml.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		annos := node.GetAnnotations(kioutil.PathAnnotation, kioutil.LegacyPathAnnotation, kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation)
		want := annos[kioutil.PathAnnotation]
		if want == "" {
			want = annos[kioutil.LegacyPathAnnotation]
		}
		idx := annos[kioutil.IndexAnnotation]
		if idx == "" {
			idx = annos[kioutil.LegacyIndexAnnotation]
		}
		wantIndex, _ := strconv.Atoi(idx)
		if path, index := fileOf(node); path != want || index != wantIndex {
			t.Errorf("%q: fileOf %q %d, kyaml %q %d", text, path, index, want, wantIndex)
		}
	}
}
