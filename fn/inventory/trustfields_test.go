package inventory_test

import (
	"slices"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/testitems"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanCABundles: the caBundle fields the report reads, in the shapes
// upstream manifests hold them. A caBundle that decodes to blank text -
// Cg== (a newline), the placeholder that controller-gen wrote and that
// kubebuilder projects, OpenKruise, HNC and Gatekeeper ship for cainjector
// or their own controller to fill - is empty, as the trust bundles read it,
// not unreadable certificate data.
func TestScanCABundles(t *testing.T) {
	webhook := func(caBundle string) string {
		return "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: hooks}\n" +
			"webhooks:\n- name: v.example.io\n  clientConfig:\n    caBundle: " + caBundle + "\n"
	}
	const (
		apiService = "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1beta1.metrics.k8s.io}\nspec:\n  caBundle: "
		crd        = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: alphas.example.io}\n" +
			"spec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        caBundle: "
	)
	cases := []struct {
		name, doc string
		found     []string
		problems  []string
	}{
		{name: "webhook", doc: webhook(`{{b64 "ca-2025"}}`),
			found: []string{"ValidatingWebhookConfiguration hooks webhooks[name=v.example.io].clientConfig.caBundle ca-2025"}},
		{name: "webhook placeholder Cg==", doc: webhook("Cg==")},
		{name: "webhook empty", doc: webhook(`""`)},
		{name: "APIService placeholder", doc: apiService + "Cg==\n"},
		{name: "APIService blank lines", doc: apiService + "DQoNCg==\n"},
		{name: "CRD conversion placeholder", doc: crd + "Cg==\n"},
		{name: "CRD conversion", doc: crd + `{{b64 "ca-2026"}}` + "\n",
			found: []string{"CustomResourceDefinition alphas.example.io spec.conversion.webhook.clientConfig.caBundle ca-2026"}},
		{name: "not base64", doc: webhook(`"!!!"`),
			problems: []string{"webhooks[name=v.example.io].clientConfig.caBundle: not base64: illegal base64 data at input byte 0"}},
		{name: "a space inside, which the API server refuses", doc: webhook(`"Cg= ="`),
			problems: []string{"webhooks[name=v.example.io].clientConfig.caBundle: not base64: illegal base64 data at input byte 2"}},
		{name: "text that is no certificate", doc: apiService + "aGVsbG8K\n",
			problems: []string{"spec.caBundle: no PEM data found"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv := inventory.Scan(testitems.Items(t, tc.doc))
			require.Equal(t, tc.found, found(inv))
			var problems []string
			for _, p := range inv.Problems {
				problems = append(problems, p.Field+": "+p.Message)
			}
			require.Equal(t, tc.problems, problems)
		})
	}
}

// TestAddedTargetKind adds target kinds by a row of the target-kind table
// each - a made-up cluster-scoped TrustAnchor holding PEM at spec.pem, and
// a made-up namespaced TrustStore holding the bundle at keys as a
// ConfigMap does - and sees the scan report the certificates where the row
// says, and its reads declare the kinds; with the shipped table, or in
// another group, it reads nothing there. TrustStore failed before the scan
// read values by the rows (it read those of core Secrets and ConfigMaps
// only).
func TestAddedTargetKind(t *testing.T) {
	anchor := kube.TargetDescriptor{Kind: "TrustAnchor", Group: "example.com", Versions: []string{"example.com/v1"},
		Store: kube.StoreField, Field: []string{"spec", "pem"}}
	store := kube.TargetDescriptor{Kind: "TrustStore", Group: "example.com", Versions: []string{"example.com/v1"},
		Namespaced: true, Store: kube.StoreKeys, DefaultKey: "ca.crt"}
	added := kube.NewTargetTable(append(kube.TargetKinds().Rows(), anchor, store)...)
	doc := func(apiVersion string) string {
		return "apiVersion: " + apiVersion + "\nkind: TrustAnchor\nmetadata: {name: roots}\nspec:\n  pem: |\n" +
			`    {{pem 4 "ca-2026"}}` + "\n---\napiVersion: " + apiVersion + "\nkind: TrustStore\nmetadata: {name: roots, namespace: a}\n" +
			"data:\n  ca.crt: |\n" + `    {{pem 4 "ca-2026"}}` + "\n"
	}
	cases := []struct {
		name, apiVersion string
		targets          kube.TargetTable
		found            []string
	}{
		{"shipped table", "example.com/v1", kube.TargetKinds(), nil},
		{"rows added", "example.com/v1", added, []string{"TrustAnchor roots spec.pem ca-2026", "TrustStore a/roots data.ca.crt ca-2026"}},
		{"rows added, other group", "example.org/v1", added, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv := inventory.ScanTargets(testitems.Items(t, doc(tc.apiVersion)), pki.NewCache(), tc.targets)
			require.Equal(t, tc.found, found(inv))
			require.Empty(t, inv.Problems)
			reads := inventory.ReadsWith(tc.targets)
			declared := slices.Contains(reads.Kinds, anchor.GroupKind()) &&
				slices.ContainsFunc(reads.Some, func(r kube.ItemRule) bool { return r.GroupKind == store.GroupKind() })
			_, isAdded := tc.targets.Lookup(store.Kind)
			assert.Equal(t, isAdded, declared, "the reads declare the added kinds")
		})
	}
}
