package kube

import (
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TargetKind is a kind of object a trust bundle is written into: a
// policy's target.kind.
type TargetKind string

// The target kinds rotate-certs ships (targetRows).
const (
	TargetSecret    TargetKind = "Secret"
	TargetConfigMap TargetKind = "ConfigMap"
	// TargetClusterTrustBundle is certificates.k8s.io's cluster-wide
	// trust object: the bundle is its spec.trustBundle.
	TargetClusterTrustBundle TargetKind = "ClusterTrustBundle"
	// TargetBundle is cert-manager trust-manager's Bundle: rotate-certs
	// keeps the previous CAs in an inLine source of its own and never
	// edits the Bundle's other sources.
	TargetBundle TargetKind = "Bundle"
)

// TargetStore is how a target kind holds a bundle: which of package
// trustbundle's renderers reads and writes it, and where package report
// finds its certificates.
type TargetStore int

const (
	// StoreKeys is a Secret or ConfigMap in every target namespace, the
	// bundle at target.key by the write-back rule (data, stringData or
	// binaryData), with the binary truststores beside it.
	StoreKeys TargetStore = iota
	// StoreField is one cluster-scoped object holding the bundle as PEM
	// at TargetDescriptor.Field.
	StoreField
	// StoreSources is a trust-manager Bundle: its own spec.sources are the
	// current CAs, and rotate-certs keeps the previous ones in an inLine
	// source of its own.
	StoreSources
)

// TargetDescriptor is what rotate-certs knows of one target kind: one row
// of the target-kind table. It is data; the behaviour of each kind stays
// with the package that has it, keyed by Kind or Store.
type TargetDescriptor struct {
	// Kind is the object's kind, as target.kind names it.
	Kind TargetKind
	// Group is its API group ("" for the core group).
	Group string
	// Versions are the API versions it is read and updated at; a created
	// object gets the first.
	Versions []string
	// Namespaced is true for a kind written once per target namespace;
	// false for one cluster-scoped object (the table's KeyOf drops the
	// namespace of such an object).
	Namespaced bool
	// Fields are the target fields, besides kind, name and metadata, that
	// apply to it; setting another is an error.
	Fields []string
	// DefaultKey is target.key when unset; "" when no key applies.
	DefaultKey string
	// OwnSources is true when the object lists its own sources, so that
	// the policy's must be empty (a trust-manager Bundle); otherwise a
	// bundle needs at least one.
	OwnSources bool
	// Store is how it holds the bundle.
	Store TargetStore
	// Field is the path of the PEM for StoreField.
	Field []string
	// CAOnly is true when its API accepts only CA certificates.
	CAOnly bool
}

// GroupKind returns the row's API group and kind.
func (d TargetDescriptor) GroupKind() GroupKind {
	return GroupKind{Group: d.Group, Kind: string(d.Kind)}
}

// Applies reports whether target field name applies to the kind.
func (d TargetDescriptor) Applies(name string) bool { return slices.Contains(d.Fields, name) }

// targetRows is the one list of the target kinds, in the order messages
// name them.
var targetRows = []TargetDescriptor{
	{Kind: TargetSecret, Versions: []string{"v1"}, Namespaced: true, DefaultKey: "ca.crt", Store: StoreKeys,
		Fields: []string{"namespaces", "namespaceSelector", "key", "additionalFormats"}},
	{Kind: TargetConfigMap, Versions: []string{"v1"}, Namespaced: true, DefaultKey: "ca-bundle.crt", Store: StoreKeys,
		Fields: []string{"namespaces", "namespaceSelector", "key", "additionalFormats"}},
	// v1beta1 since Kubernetes 1.33; an object already at v1alpha1
	// (Kubernetes 1.27-1.32) is updated in it.
	{Kind: TargetClusterTrustBundle, Group: "certificates.k8s.io", Versions: []string{"certificates.k8s.io/v1beta1", "certificates.k8s.io/v1alpha1"},
		Fields: []string{"signerName"}, Store: StoreField, Field: []string{"spec", "trustBundle"}, CAOnly: true},
	{Kind: TargetBundle, Group: "trust.cert-manager.io", Versions: []string{"trust.cert-manager.io/v1alpha1"},
		Fields: []string{"trustNamespace"}, OwnSources: true, Store: StoreSources},
}

// TargetTable is the target-kind table, looked up by kind. Its zero value
// is the table rotate-certs ships (TargetKinds).
type TargetTable struct {
	table Table[TargetKind, TargetDescriptor]
	// clusterScoped are the kinds KeyOf keys without a namespace: the
	// table's cluster-scoped kinds and otherClusterScoped().
	clusterScoped map[GroupKind]bool
}

// NewTargetTable returns a table of rows (a kind listed twice keeps its
// first row). Tests add a kind with it.
func NewTargetTable(rows ...TargetDescriptor) TargetTable {
	t := TargetTable{table: NewTable(func(d TargetDescriptor) TargetKind { return d.Kind }, rows...),
		clusterScoped: map[GroupKind]bool{}}
	for _, gk := range otherClusterScoped() {
		t.clusterScoped[gk] = true
	}
	for _, d := range rows {
		if first, _ := t.table.Lookup(d.Kind); !first.Namespaced {
			t.clusterScoped[first.GroupKind()] = true
		}
	}
	return t
}

// targetTable is built once from targetRows and never changed.
var targetTable = NewTargetTable(targetRows...)

// TargetKinds returns the table rotate-certs ships.
func TargetKinds() TargetTable { return targetTable }

func (t TargetTable) orDefault() TargetTable {
	if t.table.IsZero() {
		return targetTable
	}
	return t
}

// keyOf returns the key of node (see RefOf for a node it cannot read): the
// identity the API server gives it. The namespace of a cluster-scoped kind
// - one whose row of t says so, or one of otherClusterScoped() - is left
// out, as the API server clears it: kustomize's namespace transformer sets
// metadata.namespace on every kind its built-in schema (Kubernetes 1.21)
// does not know, ClusterTrustBundles and trust-manager Bundles among them,
// and such an object is still the cluster's one object of its name.
func (t TargetTable) keyOf(node *yaml.RNode) Key {
	if meta, _ := readable(node); !meta {
		return Key{Kind: RefOf(node).Kind}
	}
	k := Key{Kind: node.GetKind(), Namespace: node.GetNamespace(), Name: node.GetName()}
	if t.orDefault().clusterScoped[GroupKind{GroupOf(node.GetApiVersion()), k.Kind}] {
		k.Namespace = ""
	}
	return k
}

// Rows returns a copy of the table's rows, in order.
func (t TargetTable) Rows() []TargetDescriptor { return t.orDefault().table.Rows() }

// Lookup returns the row of kind.
func (t TargetTable) Lookup(kind TargetKind) (TargetDescriptor, bool) {
	return t.orDefault().table.Lookup(kind)
}

// Names returns the kinds, in table order, for enums and messages.
func (t TargetTable) Names() []string {
	var out []string
	for _, r := range t.Rows() {
		out = append(out, string(r.Kind))
	}
	return out
}
