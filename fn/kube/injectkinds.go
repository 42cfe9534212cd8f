package kube

// InjectKind is a kind of object whose caBundle fields the API server
// reads to call a webhook or an aggregated API - the fields a trust bundle
// is injected into (a policy's inject, the rotate-certs.dev/inject-ca-from
// annotation): one row of the inject-kind table. It is data: validation
// (fn/policy), the injection (fn/trustbundle) and the certificate
// inventory (fn/inventory) read it; the checks of one kind's own API (an
// APIService served by the API server itself, a conversion strategy) stay
// beside the kind in fn/trustbundle.
type InjectKind struct {
	Group, Kind string
	// Version is the API version whose fields rotate-certs knows: v1,
	// which every supported Kubernetes serves.
	Version string
	// Webhooks is true for a webhook configuration: a list webhooks[],
	// each with its clientConfig.caBundle. Otherwise ClientConfig is the
	// path of the one map that holds caBundle.
	Webhooks     bool
	ClientConfig []string
}

// injectRows is the one list of the inject kinds, cluster-scoped each.
var injectRows = []InjectKind{
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration", Version: "v1", Webhooks: true},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration", Version: "v1", Webhooks: true},
	{Group: "apiregistration.k8s.io", Kind: "APIService", Version: "v1", ClientConfig: []string{"spec"}},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Version: "v1", ClientConfig: []string{"spec", "conversion", "webhook", "clientConfig"}},
}

// InjectTable is the inject-kind table, looked up by kind.
type InjectTable struct {
	table Table[string, InjectKind]
}

// injectTable is built once from injectRows and never changed.
var injectTable = InjectTable{NewTable(func(k InjectKind) string { return k.Kind }, injectRows...)}

// InjectKinds returns the table rotate-certs ships.
func InjectKinds() InjectTable { return injectTable }

// Rows returns a copy of the table's rows, in order.
func (t InjectTable) Rows() []InjectKind { return t.table.Rows() }

// Lookup returns the row of kind.
func (t InjectTable) Lookup(kind string) (InjectKind, bool) { return t.table.Lookup(kind) }

// Names returns the kinds, in table order, for enums and messages.
func (t InjectTable) Names() []string {
	var out []string
	for _, r := range t.Rows() {
		out = append(out, r.Kind)
	}
	return out
}

// GroupKind returns the row's API group and kind.
func (k InjectKind) GroupKind() GroupKind { return GroupKind{Group: k.Group, Kind: k.Kind} }

// APIVersion is the row's group and version ("admissionregistration.k8s.io/v1").
func (k InjectKind) APIVersion() string { return k.Group + "/" + k.Version }
