package trustbundle_test

import (
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// trustAnchor is a made-up cluster-scoped kind holding trust as PEM at
// spec.pem, added to the target-kind table by its row alone.
var trustAnchor = kube.TargetDescriptor{Kind: "TrustAnchor", Group: "example.com", Versions: []string{"example.com/v1"},
	Store: kube.StoreField, Field: []string{"spec", "pem"}}

// TestAddedTargetKind adds a target kind by a row of the target-kind table
// and sees a bundle rendered into it: the object created at the row's
// version with the current CA at the row's field, or an existing one
// updated keeping its previous CA - also when kustomize set a namespace on
// it, which the row's scope (cluster-scoped) keys it without, and the
// render's reads declare every object of the kind. With the shipped table
// the kind is no target and is not read. The namespaced case failed
// before the index keyed objects by the table it is given (kube.KeyOf
// knew the scope of the shipped rows only, so the render created a second
// TrustAnchor roots without the previous CA).
func TestAddedTargetKind(t *testing.T) {
	added := kube.NewTargetTable(append(kube.TargetKinds().Rows(), trustAnchor)...)
	existing := func(meta string) string {
		return "apiVersion: example.com/v1\nkind: TrustAnchor\nmetadata: " + meta + "\nspec:\n  pem: |\n    " + indent(4, pemOf(caOld)) + "\n"
	}
	cases := []struct {
		name    string
		targets kube.TargetTable
		items   []string
		created bool
		want    []string
	}{
		{"shipped table", kube.TargetKinds(), []string{sourceSecret(caNew)}, false, nil},
		{"created", added, []string{sourceSecret(caNew)}, true, []string{pemOf(caNew)}},
		{"updated", added, []string{sourceSecret(caNew), existing("{name: roots}")}, false, []string{pemOf(caNew), pemOf(caOld)}},
		{"updated, namespace set by kustomize", added, []string{sourceSecret(caNew), existing("{name: roots, namespace: gw}")}, false,
			[]string{pemOf(caNew), pemOf(caOld)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := anchorBundle(t)
			read := false
			for _, gk := range trustbundle.ReadsWith([]policy.TrustBundle{*b}, tc.targets).Kinds {
				read = read || gk == trustAnchor.GroupKind()
			}
			assert.Equal(t, tc.want != nil, read, "every TrustAnchor is read")
			items := parseItems(t, tc.items...)
			env := trustbundle.Env{Index: kube.NewIndexWith(items, tc.targets), Now: now, Snapshots: trustbundle.NewSnapshots(items),
				PolicyRef: kube.Ref{APIVersion: policy.APIVersion, Kind: policy.Kind, Name: "p"}}
			out := trustbundle.Render(b, "spec.trustBundles[0]", env)
			if tc.want == nil {
				assert.Empty(t, out.Targets)
				return
			}
			require.Len(t, out.Targets, 1, out.Results)
			node := out.Targets[0].Node
			assert.Equal(t, "example.com/v1", node.GetApiVersion())
			assert.Equal(t, kube.Key{Kind: "TrustAnchor", Name: "roots"}, out.Targets[0].Key)
			assert.Equal(t, tc.created, out.Targets[0].Created)
			pem := kube.ScalarAt(node, "spec", "pem")
			for _, w := range tc.want {
				assert.Contains(t, pem, w)
			}
		})
	}
}

// anchorBundle is a decoded bundle whose target is the TrustAnchor
// "roots": decoded as a ClusterTrustBundle target (the shipped table's
// validation does not know the kind), whose defaults a cluster-scoped kind
// without kind-specific fields shares.
func anchorBundle(t *testing.T) *policy.TrustBundle {
	t.Helper()
	node, err := yaml.Parse("apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata: {name: p}\nspec:\n  trustBundles:\n" +
		"  - name: gw\n    sources: [{secret: {name: src, namespace: gw}}]\n    target: {kind: ClusterTrustBundle, name: roots}\n")
	require.NoError(t, err)
	pol, err := policy.Decode(node)
	require.NoError(t, err)
	b := &pol.Spec.TrustBundles[0]
	b.Target.Kind = trustAnchor.Kind
	return b
}
