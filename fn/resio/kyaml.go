package resio

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// itemsError returns an error when the ResourceList in input has an items
// field that is neither a list nor null.
func itemsError(input []byte) error {
	list, err := yaml.Parse(string(input))
	if err != nil || list.YNode().Kind != yaml.MappingNode {
		return nil // kyaml's reader read it; its verdict stands
	}
	f := list.Field("items")
	if f == nil || f.Value.IsTaggedNull() {
		return nil
	}
	if k := f.Value.YNode().Kind; k != yaml.SequenceNode {
		return fmt.Errorf("the ResourceList's items is a YAML %s, not a list of resources", kube.NodeKindName(k))
	}
	return nil
}
