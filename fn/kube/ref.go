// Package kube is the thin layer between kyaml's RNodes and rotate-certs'
// plain Go logic: object references and indexes, reading the values of
// Secrets and ConfigMaps, annotations, field paths and the one
// error type for a problem at a field (FieldError), KRM results that
// point at a resource, field and file, and label selectors matched as the API
// server does (Selector).
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

// RefOf returns the reference of node, for messages. It is safe on any
// node: what
// cannot be read (the name of an object whose metadata is a list, the file
// of one whose annotations are) is left empty; CheckShape says why.
func RefOf(node *yaml.RNode) Ref {
	meta, annotations := readable(node)
	if !meta {
		if node.YNode().Kind != yaml.MappingNode {
			return Ref{}
		}
		return Ref{APIVersion: Safe(node.GetApiVersion()), Kind: Safe(node.GetKind())}
	}
	// A name that is not plain text (key material pasted into metadata)
	// is no valid Kubernetes name, so it names nothing the function
	// manages; it is described rather than repeated in every message.
	r := Ref{
		APIVersion: Safe(node.GetApiVersion()),
		Kind:       Safe(node.GetKind()),
		Namespace:  Safe(node.GetNamespace()),
		Name:       Safe(node.GetName()),
	}
	if annotations {
		r.Path, r.Index = fileOf(node)
	}
	return r
}

// readable reports whether kyaml's metadata accessors can read node:
// meta for its name and namespace (node and its metadata are maps),
// annotations for its annotations and labels too (CheckShape passes).
func readable(node *yaml.RNode) (meta, annotations bool) {
	switch badShape(node.YNode()) {
	case shapeOK:
		return true, true
	case shapeLabels, shapeAnnotations:
		return true, false
	}
	return false, false
}

// FileOf returns the path and index annotations of node (the current ones,
// else the legacy ones kpt and older tools still write); "" and 0 when its
// annotations cannot be read.
func FileOf(node *yaml.RNode) (string, int) {
	if _, ok := readable(node); !ok {
		return "", 0
	}
	return fileOf(node)
}

// AnnotationField is the field path of annotation key, for results:
// "metadata.annotations[key]".
func AnnotationField(key string) string { return "metadata.annotations[" + key + "]" }

// NewFileName is the file name of an object the function creates, put
// beside the files of the input it comes from: "<kind>_<namespace>_<name>.yaml"
// in lower-case kind, without the namespace for a cluster-scoped object, and
// with any ':' of the name (a ClusterTrustBundle's signer prefix) as '_'.
func NewFileName(key Key) string {
	file := strings.ToLower(key.Kind) + "_"
	if key.Namespace != "" {
		file += key.Namespace + "_"
	}
	return file + strings.ReplaceAll(key.Name, ":", "_") + ".yaml"
}

// fileOf is FileOf for a node whose annotations can be read: each
// annotation as kyaml's GetAnnotations reads it (the first metadata, the
// first annotations, the first of each key), without building the map it
// builds - every message names its object's file, and RefOf is on every
// hot path.
func fileOf(node *yaml.RNode) (string, int) {
	n := node.YNode()
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	annos := MapValue(MapValue(n, "metadata"), "annotations")
	value := func(key string) string {
		if v := MapValue(annos, key); v != nil {
			return v.Value
		}
		return ""
	}
	path := value(kioutil.PathAnnotation)
	if path == "" {
		path = value(kioutil.LegacyPathAnnotation)
	}
	idx := value(kioutil.IndexAnnotation)
	if idx == "" {
		idx = value(kioutil.LegacyIndexAnnotation)
	}
	i, _ := strconv.Atoi(idx)
	return path, i
}

// File returns Path for messages (SafePath).
func (r Ref) File() string { return SafePath(r.Path) }

// String returns "Kind namespace/name" (or "Kind name" when cluster-scoped
// or namespace-less), the form every message uses.
//
// Each part is shown only when it is Plain (every valid kind, namespace
// and name is), else described (Safe): a reference is printed in messages,
// and a name read from a hostile input may hold anything.
func (r Ref) String() string {
	if r.Namespace == "" {
		return Safe(r.Kind) + " " + Safe(r.Name)
	}
	return Safe(r.Kind) + " " + Safe(r.Namespace) + "/" + Safe(r.Name)
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
		res.File = &framework.File{Path: r.File(), Index: r.Index}
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

// KeyOf returns the key of node by the target-kind table rotate-certs
// ships (TargetTable.KeyOf): the identity the API server gives it.
func KeyOf(node *yaml.RNode) Key { return targetTable.keyOf(node) }

// otherClusterScoped are the cluster-scoped kinds rotate-certs looks up by
// name besides the target kinds (whose rows say their scope): the objects
// it injects caBundles into (the inject-kind table) and Namespaces.
func otherClusterScoped() []GroupKind {
	var out []GroupKind
	for _, k := range injectRows {
		out = append(out, k.GroupKind())
	}
	return append(out, GroupKind{Group: "", Kind: "Namespace"})
}

// IsLocalConfig reports whether node is marked
// config.kubernetes.io/local-config: "true" (a Kptfile, a function config):
// such items are never managed, only passed through.
func IsLocalConfig(node *yaml.RNode) bool {
	// Read straight from the nodes: every item is asked, several times a
	// run, and kyaml's GetAnnotations visits metadata through filters.
	v := ""
	if annos := MapValue(MapValue(node.YNode(), yaml.MetadataField), yaml.AnnotationsField); annos != nil && annos.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(annos.Content); i += 2 {
			if annos.Content[i].Value == LocalConfigAnnotation {
				v = annos.Content[i+1].Value // the last one, as GetAnnotations reads it
			}
		}
	}
	return strings.EqualFold(v, "true")
}

// LocalConfigAnnotation marks resources that are configuration for tools,
// not for the cluster.
const LocalConfigAnnotation = "config.kubernetes.io/local-config"

// Stub returns a node that names what node names - RefOf and FileOf read
// the same of both - and holds nothing else: its apiVersion, kind,
// metadata.name, metadata.namespace and the path and index annotations
// (current and legacy), copies of node's values: nothing of node's tree
// (nor of the parser's slab it may have been cut from) stays. A command
// that has what else it needs of an object (a policy decoded) holds the
// stub and lets the rest of the tree go. A node whose metadata cannot be
// read as a map (or through an alias) is returned as it is.
func Stub(node *yaml.RNode) *yaml.RNode {
	if meta, annotations := readable(node); !meta || !annotations {
		return node
	}
	n := node.YNode()
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	pick := func(from *yaml.Node, keys ...string) *yaml.Node {
		out := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		for _, k := range keys {
			if v := MapValue(from, k); v != nil {
				out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: k}, yaml.CopyYNode(v))
			}
		}
		return out
	}
	meta := MapValue(n, "metadata")
	annos := MapValue(meta, "annotations")
	for _, m := range []*yaml.Node{n, meta, annos} {
		if m != nil && m.Kind == yaml.AliasNode {
			return node // read through an alias: keep what kyaml reads
		}
	}
	stubMeta := pick(meta, "name", "namespace")
	if annos != nil {
		// The legacy annotations only where fileOf reads them.
		keys := []string{kioutil.PathAnnotation, kioutil.IndexAnnotation}
		for _, k := range [][2]string{{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation}, {kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation}} {
			if v := MapValue(annos, k[0]); v == nil || v.Value == "" {
				keys = append(keys, k[1])
			}
		}
		stubMeta.Content = append(stubMeta.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: "annotations"}, pick(annos, keys...))
	}
	out := pick(n, "apiVersion", "kind")
	out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: "metadata"}, stubMeta)
	return yaml.NewRNode(out)
}
