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
// updated keeping its previous CA. With the shipped table the kind is no
// target.
func TestAddedTargetKind(t *testing.T) {
	added := kube.NewTargetTable(append(kube.TargetKinds().Rows(), trustAnchor)...)
	existing := "apiVersion: example.com/v1\nkind: TrustAnchor\nmetadata: {name: roots}\nspec:\n  pem: |\n    " + indent(4, pemOf(caOld)) + "\n"
	cases := []struct {
		name    string
		targets kube.TargetTable
		items   []string
		want    []string
	}{
		{"shipped table", kube.TargetKinds(), []string{sourceSecret(caNew)}, nil},
		{"created", added, []string{sourceSecret(caNew)}, []string{pemOf(caNew)}},
		{"updated", added, []string{sourceSecret(caNew), existing}, []string{pemOf(caNew), pemOf(caOld)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := anchorBundle(t)
			items := parseItems(t, tc.items...)
			env := trustbundle.Env{Index: kube.NewIndex(items), Now: now, Snapshots: trustbundle.NewSnapshots(items),
				PolicyRef: kube.Ref{APIVersion: policy.APIVersion, Kind: policy.Kind, Name: "p"}, Targets: tc.targets}
			out := trustbundle.Render(b, "spec.trustBundles[0]", env)
			if tc.want == nil {
				assert.Empty(t, out.Targets)
				return
			}
			require.Len(t, out.Targets, 1, out.Results)
			node := out.Targets[0].Node
			assert.Equal(t, "example.com/v1", node.GetApiVersion())
			assert.Equal(t, kube.Key{Kind: "TrustAnchor", Name: "roots"}, out.Targets[0].Key)
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
