package restart

import (
	"slices"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddedWorkloadKind adds three kinds to the workload-kind table by a
// row each and sees each reader of the restart rules take them from their
// rows: the readers of a changed target of the rolled kinds rolled (the
// trust-hash written at the row's template path), the single-pod warning
// only for the kind whose row says spec.replicas sets its pod count, the
// reported kind reported and not rolled, the rolled ones counted for the
// waves (countWorkloads, whose count bounds the records PreviousHeldUntil
// trusts) and every one declared in the reads. With the shipped table none
// is read, counted or declared.
func TestAddedWorkloadKind(t *testing.T) {
	const pod = "metadata: {labels: {app: x}}\n    spec:\n" + readsTrustEnv
	docs := []string{
		"apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: clone, namespace: a}\nspec:\n  replicas: 1\n  template:\n    " + pod,
		"apiVersion: example.com/v1\nkind: NodeAgent\nmetadata: {name: agent, namespace: a}\nspec:\n  pod:\n    " + pod,
		"apiVersion: example.com/v1\nkind: BatchRun\nmetadata: {name: batch, namespace: a}\nspec:\n  template:\n    " + pod,
	}
	added := []kube.GroupKind{{Group: "apps.kruise.io", Kind: "CloneSet"}, {Group: "example.com", Kind: "NodeAgent"}, {Group: "example.com", Kind: "BatchRun"}}
	cases := []struct {
		name     string
		kinds    policy.WorkloadTable
		want     []string
		counted  int
		declared []kube.GroupKind
	}{
		{"shipped table", policy.WorkloadKinds(), nil, 0, nil},
		{"rows added", addedKinds(), []string{
			"info CloneSet clone spec.template.metadata.annotations." + TrustHashAnnotation,
			"warning CloneSet clone spec.replicas",
			"info NodeAgent agent spec.pod.metadata.annotations." + TrustHashAnnotation,
			"info BatchRun batch spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef",
		}, 2, added},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			items := parseItems(t, docs...)
			assert.Equal(t, tc.counted, countWorkloads(tc.kinds, items), "rolled workloads counted")
			declared := readsWith(nil, tc.kinds).Kinds
			for _, gk := range added {
				assert.Equal(t, slices.Contains(tc.declared, gk), slices.Contains(declared, gk), gk)
			}
			b := Bundle{Name: "gw", Field: "spec.trustBundles[0]", Targets: []Target{trustTarget("a", "sha256:01", true)}, Restart: policy.Restart{Auto: yes()}}
			var got []string
			for _, r := range apply([]Bundle{b}, Env{Items: items, Kinds: tc.kinds}) {
				require.NotNil(t, r.Field, r.Message)
				got = append(got, string(r.Severity)+" "+r.ResourceRef.Kind+" "+r.ResourceRef.Name+" "+r.Field.Path)
			}
			assert.Equal(t, tc.want, got)
			for _, n := range items {
				kind, ok := tc.kinds.At(n.GetApiVersion(), n.GetKind())
				if !ok || kind.Role != policy.RoleRolled {
					continue
				}
				w, err := readWorkload(n, kind)
				require.NoError(t, err)
				h, _ := w.trustHash()
				assert.Equal(t, trustHash([]bundleHash{{"gw", "sha256:01"}}), h, n.GetName())
			}
		})
	}
}
