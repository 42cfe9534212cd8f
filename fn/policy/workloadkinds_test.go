package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cloneSet is OpenKruise's CloneSet as a row of the workload-kind table:
// the kind the tests add to it.
var cloneSet = WorkloadKind{Kind: "CloneSet", APIVersions: []string{"apps.kruise.io/v1alpha1"},
	Template: []string{"spec", "template"}, Role: RoleRolled, Replicas: true}

// TestAddedWorkloadKind adds a kind to the workload-kind table by one row
// and sees restart.workloads accept it, and the message for a kind it
// cannot name list it. The message used to print the first four kinds by
// index, so a fifth was left out of it: this test failed before the table
// (written then over the list of kinds, appended to).
func TestAddedWorkloadKind(t *testing.T) {
	added := NewWorkloadTable(append(WorkloadKinds().Rows(), cloneSet)...)
	cases := []struct {
		name  string
		kinds WorkloadTable
		kind  string
		msg   string
	}{
		{"the shipped table rejects it", WorkloadKinds(), "CloneSet", `"CloneSet" is not one of Deployment, StatefulSet, DaemonSet, Rollout (`},
		{"a row adds it", added, "CloneSet", ""},
		{"the message names the fifth kind", added, "Job", `"Job" is not one of Deployment, StatefulSet, DaemonSet, Rollout, CloneSet (`},
		{"a listed kind is not named", added, "Pod", `"Pod" is not one of Deployment, StatefulSet, DaemonSet, Rollout, CloneSet (`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Restart{Workloads: []WorkloadRef{{Kind: tc.kind, Name: "a"}}}
			errs := r.validateWorkloads("restart", tc.kinds)
			if tc.msg == "" {
				assert.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1)
			assert.Equal(t, "restart.workloads[0].kind", errs[0].Field)
			assert.Contains(t, errs[0].Err.Error(), tc.msg)
		})
	}
}

// TestWorkloadTable: the zero table is the shipped one, a kind is found at
// the API versions its row names only, and the rolled kinds come in table
// order.
func TestWorkloadTable(t *testing.T) {
	var zero WorkloadTable
	assert.Equal(t, WorkloadKinds().Rows(), zero.Rows())
	assert.Equal(t, []string{kindDeployment, kindStatefulSet, kindDaemonSet, kindArgoRollout}, zero.Rolled())
	cases := []struct {
		apiVersion, kind string
		found            bool
	}{
		{"apps/v1", "Deployment", true},
		{"extensions/v1beta1", "Deployment", false},
		{"batch/v1beta1", "CronJob", true},
		{"v1", "Pod", true},
		{"apps.kruise.io/v1alpha1", "CloneSet", false},
		{"v1", "Service", false},
	}
	for _, tc := range cases {
		k, ok := zero.At(tc.apiVersion, tc.kind)
		assert.Equal(t, tc.found, ok, tc.apiVersion+" "+tc.kind)
		if ok {
			assert.Equal(t, tc.kind, k.Kind)
		}
	}
	first := NewWorkloadTable(cloneSet, WorkloadKind{Kind: "CloneSet", Role: RoleListed})
	k, _ := first.Lookup("CloneSet")
	assert.Equal(t, RoleRolled, k.Role, "a kind listed twice keeps its first row")
}
