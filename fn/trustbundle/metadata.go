package trustbundle

import (
	"fmt"
	"maps"
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// setMetadata sets the static labels and annotations of every bundle that
// writes the object (target.metadata) and reports whether that changed it.
// Labels and annotations the policy does not name are kept. Two bundles
// that set one key to different values are an error (conflictingMetadata
// reports it before anything is written).
func setMetadata(node *yaml.RNode, targets []*Target) (bool, error) {
	changed := false
	for _, t := range targets {
		if t.metadata == nil {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(t.metadata.Labels)) {
			c, err := setLabel(node, k, t.metadata.Labels[k])
			if err != nil {
				return changed, fmt.Errorf("%s: set label %s: %w", kube.RefOf(node), k, err)
			}
			changed = changed || c
		}
		for _, k := range slices.Sorted(maps.Keys(t.metadata.Annotations)) {
			c, err := kube.SetAnnotation(node, k, t.metadata.Annotations[k])
			if err != nil {
				return changed, err
			}
			changed = changed || c
		}
	}
	return changed, nil
}

// conflictingMetadata returns a message when two bundles that write the
// object set one label or annotation to different values, "" otherwise:
// each render would apply the later one, and the policy cannot mean both.
func conflictingMetadata(targets []*Target) string {
	type setter struct{ bundle, value string }
	seen := map[string]setter{}
	for _, t := range targets {
		if t.metadata == nil {
			continue
		}
		for _, m := range []struct {
			what   string
			values map[string]string
		}{{"label", t.metadata.Labels}, {"annotation", t.metadata.Annotations}} {
			for _, k := range slices.Sorted(maps.Keys(m.values)) {
				id := m.what + " " + k
				v := m.values[k]
				if other, ok := seen[id]; ok && other.value != v {
					return fmt.Sprintf("bundles %q and %q both write this object and set its %s %s to different values (%q, %q) in target.metadata: give them the same value or set it in one bundle only",
						other.bundle, t.bundle, m.what, k, other.value, v)
				}
				seen[id] = setter{t.bundle, v}
			}
		}
	}
	return ""
}

// setLabel sets label key to value and reports whether it changed. A label
// that is there keeps its comments; values are single-quoted, as
// annotations are, so that "true" or "1" stays a string for every tool.
func setLabel(node *yaml.RNode, key, value string) (bool, error) {
	if cur, ok := node.GetLabels(key)[key]; ok && cur == value {
		return false, nil
	}
	s := yaml.NewStringRNode(value)
	s.YNode().Style = yaml.SingleQuotedStyle
	// The value is replaced by a new node (never edited in place: the
	// function-mode writer re-encodes only new nodes), which takes over
	// the old one's comments.
	old, err := node.Pipe(yaml.Lookup(yaml.MetadataField, yaml.LabelsField, key))
	if err != nil {
		return false, err
	}
	if old != nil {
		o, y := old.YNode(), s.YNode()
		y.HeadComment, y.LineComment, y.FootComment = o.HeadComment, o.LineComment, o.FootComment
	}
	labels, err := node.Pipe(yaml.Lookup(yaml.MetadataField, yaml.LabelsField))
	if err != nil {
		return false, err
	}
	if labels != nil && labels.YNode().Kind == yaml.ScalarNode && labels.YNode().ShortTag() == yaml.NodeTagNull {
		// "labels:" with no value: make it the (empty) map it stands for.
		y := labels.YNode()
		y.Kind, y.Tag, y.Value, y.Style = yaml.MappingNode, yaml.NodeTagMap, "", 0
	}
	return true, node.PipeE(yaml.LookupCreate(yaml.MappingNode, yaml.MetadataField, yaml.LabelsField), yaml.SetField(key, s))
}
