// Package kube is the thin layer between kyaml's RNodes and rotate-certs'
// plain Go logic: object references and indexes, reading and writing the
// values of Secrets and ConfigMaps, annotations, and KRM results that point
// at a resource, field and file.
//
// It edits nodes in place so that comments, key order and quoting of
// everything it does not change survive.
package kube

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Ref identifies a resource and, when it came from a file, where.
type Ref struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// Path is the file the resource was read from (path annotation), if any.
	Path string
	// Index is the resource's position in that file.
	Index int
}

// RefOf returns the reference of node.
func RefOf(node *yaml.RNode) Ref {
	r := Ref{
		APIVersion: node.GetApiVersion(),
		Kind:       node.GetKind(),
		Namespace:  node.GetNamespace(),
		Name:       node.GetName(),
	}
	r.Path, r.Index = FileOf(node)
	return r
}

// FileOf returns the path and index annotations of node (the current ones,
// else the legacy ones kpt and older tools still write).
func FileOf(node *yaml.RNode) (string, int) {
	annos := node.GetAnnotations(kioutil.PathAnnotation, kioutil.LegacyPathAnnotation,
		kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation)
	path := annos[kioutil.PathAnnotation]
	if path == "" {
		path = annos[kioutil.LegacyPathAnnotation]
	}
	idx := annos[kioutil.IndexAnnotation]
	if idx == "" {
		idx = annos[kioutil.LegacyIndexAnnotation]
	}
	i, _ := strconv.Atoi(idx)
	return path, i
}

// String returns "Kind namespace/name" (or "Kind name" when cluster-scoped
// or namespace-less), the form every message uses.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Result returns a KRM result about this resource. field is a dotted field
// path such as "data.ca.crt"; it may be empty.
func (r Ref) Result(severity framework.Severity, field, message string) *framework.Result {
	res := &framework.Result{
		Message:  message,
		Severity: severity,
		ResourceRef: &yaml.ResourceIdentifier{
			TypeMeta: yaml.TypeMeta{APIVersion: r.APIVersion, Kind: r.Kind},
			NameMeta: yaml.NameMeta{Name: r.Name, Namespace: r.Namespace},
		},
	}
	if field != "" {
		res.Field = &framework.Field{Path: field}
	}
	if r.Path != "" {
		res.File = &framework.File{Path: r.Path, Index: r.Index}
	}
	return res
}

// Key identifies an object by kind, namespace and name, for messages and
// for maps over objects of known kinds. The API group is not part of it:
// Index adds the group (its Get looks in the core group only), so an
// object of another group with the same kind and name never stands in for
// a core Secret or ConfigMap.
type Key struct {
	Kind      string
	Namespace string
	Name      string
}

// String returns "Kind namespace/name".
func (k Key) String() string {
	return Ref{Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}.String()
}

// KeyOf returns the key of node.
func KeyOf(node *yaml.RNode) Key {
	return Key{Kind: node.GetKind(), Namespace: node.GetNamespace(), Name: node.GetName()}
}

// IsLocalConfig reports whether node is marked
// config.kubernetes.io/local-config: "true" (a Kptfile, a function config):
// such items are never managed, only passed through.
func IsLocalConfig(node *yaml.RNode) bool {
	// Read straight from the nodes: every item is asked, several times a
	// run, and kyaml's GetAnnotations visits metadata through filters.
	v := ""
	if annos := mappingField(mappingField(node.YNode(), yaml.MetadataField), yaml.AnnotationsField); annos != nil {
		for i := 0; i+1 < len(annos.Content); i += 2 {
			if annos.Content[i].Value == LocalConfigAnnotation {
				v = annos.Content[i+1].Value // the last one, as GetAnnotations reads it
			}
		}
	}
	return strings.EqualFold(v, "true")
}

// mappingField returns the mapping value of key in mapping m, or nil.
func mappingField(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			if v := m.Content[i+1]; v.Kind == yaml.MappingNode {
				return v
			}
			return nil
		}
	}
	return nil
}

// LocalConfigAnnotation marks resources that are configuration for tools,
// not for the cluster.
const LocalConfigAnnotation = "config.kubernetes.io/local-config"
