package restart

import (
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddedWorkloadKind adds two kinds to the workload-kind table by a row
// each and sees their readers of a changed target rolled (the trust-hash
// written at the row's template path), with the single-pod warning only
// for the kind whose row says spec.replicas sets its pod count; with the
// shipped table neither is read.
func TestAddedWorkloadKind(t *testing.T) {
	const pod = "metadata: {labels: {app: x}}\n    spec:\n" + readsTrustEnv
	docs := []string{
		"apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: clone, namespace: a}\nspec:\n  replicas: 1\n  template:\n    " + pod,
		"apiVersion: example.com/v1\nkind: NodeAgent\nmetadata: {name: agent, namespace: a}\nspec:\n  pod:\n    " + pod,
	}
	cases := []struct {
		name  string
		kinds policy.WorkloadTable
		want  []string
	}{
		{"shipped table", policy.WorkloadKinds(), nil},
		{"rows added", addedKinds(), []string{
			"info CloneSet clone spec.template.metadata.annotations." + TrustHashAnnotation,
			"warning CloneSet clone spec.replicas",
			"info NodeAgent agent spec.pod.metadata.annotations." + TrustHashAnnotation,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			items := parseItems(t, docs...)
			b := Bundle{Name: "gw", Field: "spec.trustBundles[0]", Targets: []Target{trustTarget("a", "sha256:01", true)}, Restart: policy.Restart{Auto: yes()}}
			var got []string
			for _, r := range apply([]Bundle{b}, Env{Items: items, Kinds: tc.kinds}) {
				require.NotNil(t, r.Field, r.Message)
				got = append(got, string(r.Severity)+" "+r.ResourceRef.Kind+" "+r.ResourceRef.Name+" "+r.Field.Path)
			}
			assert.Equal(t, tc.want, got)
			for _, n := range items {
				kind, ok := tc.kinds.At(n.GetApiVersion(), n.GetKind())
				if !ok {
					continue
				}
				w, err := readWorkload(n, kind)
				require.NoError(t, err)
				h, _ := w.TrustHash()
				assert.Equal(t, trustHash([]bundleHash{{"gw", "sha256:01"}}), h, n.GetName())
			}
		})
	}
}
