package alerts

import (
	"fmt"
	"maps"
	"path"
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// PrometheusRule identity.
const (
	APIVersion = "monitoring.coreos.com/v1"
	Kind       = "PrometheusRule"
)

// Apply writes groups into the PrometheusRule node (existing, from the
// input) and sets labels on it, changing only what differs so that an
// unchanged render leaves it byte-identical. It reports whether anything
// changed.
func Apply(node *yaml.RNode, groups []Group, labels map[string]string) (bool, error) {
	want, err := groupsNode(groups)
	if err != nil {
		return false, err
	}
	changed := false
	cur, err := node.Pipe(yaml.Lookup("spec", "groups"))
	if err != nil {
		return false, fmt.Errorf("%s: reading spec.groups: %w", kube.RefOf(node), err)
	}
	if cur == nil || cur.MustString() != want.MustString() {
		if err := node.PipeE(yaml.LookupCreate(yaml.MappingNode, "spec"), yaml.SetField("groups", want)); err != nil {
			return false, fmt.Errorf("%s: set spec.groups: %w", kube.RefOf(node), err)
		}
		changed = true
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if node.GetLabels()[k] == labels[k] {
			continue
		}
		if err := node.PipeE(yaml.SetLabel(k, labels[k])); err != nil {
			return false, fmt.Errorf("%s: set label %s: %w", kube.RefOf(node), k, err)
		}
		changed = true
	}
	return changed, nil
}

// New returns an empty PrometheusRule ns/name. When dir is set the rule is
// placed in a file of its own there (prometheusrule_<ns>_<name>.yaml), next
// to the policy, so that kpt writes it back.
func New(namespace, name, dir string) *yaml.RNode {
	node := yaml.NewMapRNode(nil)
	_ = node.PipeE(yaml.SetField("apiVersion", yaml.NewStringRNode(APIVersion)))
	_ = node.PipeE(yaml.SetField("kind", yaml.NewStringRNode(Kind)))
	meta := yaml.NewMapRNode(nil)
	_ = meta.PipeE(yaml.SetField("name", yaml.NewStringRNode(name)))
	_ = meta.PipeE(yaml.SetField("namespace", yaml.NewStringRNode(namespace)))
	_ = node.PipeE(yaml.SetField("metadata", meta))
	_ = node.PipeE(yaml.SetLabel("app.kubernetes.io/managed-by", "rotate-certs"))
	if dir != "" {
		_ = node.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, path.Join(dir, fmt.Sprintf("prometheusrule_%s_%s.yaml", namespace, name))))
		_ = node.PipeE(yaml.SetAnnotation(kioutil.IndexAnnotation, "0"))
	}
	return node
}

// groupsNode encodes the groups as YAML the way Prometheus rule files are
// written; map keys come out sorted, so the bytes are stable.
func groupsNode(groups []Group) (*yaml.RNode, error) {
	if groups == nil {
		groups = []Group{}
	}
	b, err := yaml.Marshal(groups)
	if err != nil {
		return nil, fmt.Errorf("encoding rule groups: %w", err)
	}
	n, err := yaml.Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("encoding rule groups: %w", err)
	}
	return n, nil
}
