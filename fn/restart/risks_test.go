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
		shape  Shape
		pdbs   []kube.Selector
		fields []string
	}{
		{"replicas unset, no PDB", Shape{Kind: rowOf("Deployment"), PodLabels: app}, nil, []string{"spec.replicas"}},
		{"one replica, no PDB", Shape{Kind: rowOf("Deployment"), Replicas: &one, ReplicasSet: true, PodLabels: app}, nil, []string{"spec.replicas"}},
		{"one replica, PDB of other pods", Shape{Kind: rowOf("StatefulSet"), Replicas: &one, ReplicasSet: true, PodLabels: app}, []kube.Selector{other}, []string{"spec.replicas"}},
		{"one replica, matching PDB", Shape{Kind: rowOf("Deployment"), Replicas: &one, ReplicasSet: true, PodLabels: app}, []kube.Selector{other, matching}, nil},
		{"one replica, empty policy/v1 selector covers all", Shape{Kind: rowOf("Rollout"), Replicas: &one, ReplicasSet: true, PodLabels: app}, []kube.Selector{{}}, nil},
		{"three replicas", Shape{Kind: rowOf("Deployment"), Replicas: &three, ReplicasSet: true, PodLabels: app}, nil, nil},
		{"scaled to zero", Shape{Kind: rowOf("Deployment"), Replicas: &zero, ReplicasSet: true, PodLabels: app}, nil, nil},
		{"replicas not a number (a placeholder)", Shape{Kind: rowOf("Deployment"), ReplicasSet: true, PodLabels: app}, nil, nil},
		{"DaemonSet has no replicas", Shape{Kind: rowOf("DaemonSet"), PodLabels: app}, nil, nil},
		{"paused Deployment", Shape{Kind: rowOf("Deployment"), Replicas: &three, ReplicasSet: true, Paused: true}, nil, []string{"spec.paused"}},
		{"paused Rollout", Shape{Kind: rowOf("Rollout"), Replicas: &three, ReplicasSet: true, Paused: true}, nil, []string{"spec.paused"}},
		{"StatefulSet OnDelete", Shape{Kind: rowOf("StatefulSet"), Replicas: &three, ReplicasSet: true, UpdateStrategy: "OnDelete"}, nil, []string{"spec.updateStrategy.type"}},
		{"DaemonSet OnDelete", Shape{Kind: rowOf("DaemonSet"), UpdateStrategy: "OnDelete"}, nil, []string{"spec.updateStrategy.type"}},
		{"DaemonSet RollingUpdate", Shape{Kind: rowOf("DaemonSet"), UpdateStrategy: "RollingUpdate"}, nil, nil},
		{"everything at once", Shape{Kind: rowOf("Deployment"), Paused: true, PodLabels: app}, nil, []string{"spec.replicas", "spec.paused"}},
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
