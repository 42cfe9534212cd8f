package restart

import (
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/stretchr/testify/assert"
)

func TestRisks(t *testing.T) {
	one, three, zero := int64(1), int64(3), int64(0)
	app := map[string]string{"app": "ratelimit"}
	matching := kube.Selector{MatchLabels: map[string]string{"app": "ratelimit"}}
	other := kube.Selector{MatchLabels: map[string]string{"app": "envoy"}}
	cases := []struct {
		name   string
		shape  shape
		pdbs   []kube.Selector
		fields []string
	}{
		{"replicas unset, no PDB", shape{kind: rowOf("Deployment"), podLabels: app}, nil, []string{"spec.replicas"}},
		{"one replica, no PDB", shape{kind: rowOf("Deployment"), replicas: &one, replicasSet: true, podLabels: app}, nil, []string{"spec.replicas"}},
		{"one replica, PDB of other pods", shape{kind: rowOf("StatefulSet"), replicas: &one, replicasSet: true, podLabels: app}, []kube.Selector{other}, []string{"spec.replicas"}},
		{"one replica, matching PDB", shape{kind: rowOf("Deployment"), replicas: &one, replicasSet: true, podLabels: app}, []kube.Selector{other, matching}, nil},
		{"one replica, empty policy/v1 selector covers all", shape{kind: rowOf("Rollout"), replicas: &one, replicasSet: true, podLabels: app}, []kube.Selector{{}}, nil},
		{"three replicas", shape{kind: rowOf("Deployment"), replicas: &three, replicasSet: true, podLabels: app}, nil, nil},
		{"scaled to zero", shape{kind: rowOf("Deployment"), replicas: &zero, replicasSet: true, podLabels: app}, nil, nil},
		{"replicas not a number (a placeholder)", shape{kind: rowOf("Deployment"), replicasSet: true, podLabels: app}, nil, nil},
		{"DaemonSet has no replicas", shape{kind: rowOf("DaemonSet"), podLabels: app}, nil, nil},
		{"paused Deployment", shape{kind: rowOf("Deployment"), replicas: &three, replicasSet: true, paused: true}, nil, []string{"spec.paused"}},
		{"paused Rollout", shape{kind: rowOf("Rollout"), replicas: &three, replicasSet: true, paused: true}, nil, []string{"spec.paused"}},
		{"StatefulSet OnDelete", shape{kind: rowOf("StatefulSet"), replicas: &three, replicasSet: true, updateStrategy: "OnDelete"}, nil, []string{"spec.updateStrategy.type"}},
		{"DaemonSet OnDelete", shape{kind: rowOf("DaemonSet"), updateStrategy: "OnDelete"}, nil, []string{"spec.updateStrategy.type"}},
		{"DaemonSet RollingUpdate", shape{kind: rowOf("DaemonSet"), updateStrategy: "RollingUpdate"}, nil, nil},
		{"everything at once", shape{kind: rowOf("Deployment"), paused: true, podLabels: app}, nil, []string{"spec.replicas", "spec.paused"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var fields []string
			for _, r := range risks(tc.shape, tc.pdbs) {
				fields = append(fields, r.Field)
				assert.NotEmpty(t, r.Message)
			}
			assert.Equal(t, tc.fields, fields)
		})
	}
}
