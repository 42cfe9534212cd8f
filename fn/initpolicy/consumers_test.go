package initpolicy

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/assert"
)

// TestAddedWorkloadKind adds a kind to the workload-kind table by one row
// (OpenKruise's CloneSet) and sees init list it as a reader of the Secret
// its pod template reads, at the row's template path; with the shipped
// table it is not read.
func TestAddedWorkloadKind(t *testing.T) {
	added := policy.NewWorkloadTable(append(policy.WorkloadKinds().Rows(),
		policy.WorkloadKind{Kind: "CloneSet", APIVersions: []string{"apps.kruise.io/v1alpha1"}, Template: []string{"spec", "template"}, Role: policy.RoleRolled, Replicas: true})...)
	text := strings.Join([]string{
		"apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: clone, namespace: eg}\nspec: {replicas: 2, template: {spec: {volumes: [{name: ca, secret: {secretName: envoy-gateway}}], containers: [{name: c}]}}}\n",
		"apiVersion: apps.kruise.io/v1beta1\nkind: CloneSet\nmetadata: {name: other-version, namespace: eg}\nspec: {template: {spec: {volumes: [{name: ca, secret: {secretName: envoy-gateway}}], containers: [{name: c}]}}}\n",
	}, "---\n")
	secret := kube.Key{Kind: "Secret", Namespace: "eg", Name: "envoy-gateway"}
	cases := []struct {
		name  string
		kinds policy.WorkloadTable
		want  []string
	}{
		{"shipped table", policy.WorkloadKinds(), nil},
		{"row added", added, []string{"CloneSet eg/clone (volume ca)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			consumers, notes := findConsumers(parseAll(t, text), tc.kinds)
			var got []string
			for _, c := range consumers[secret] {
				got = append(got, c.String())
			}
			assert.Equal(t, tc.want, got)
			assert.Empty(t, notes)
		})
	}
}
