package trustdiff

import "testing"

// TestRolloutsOfEveryVersion: a change of a field that rolls machines out
// is a rollout at each API version the machine-kind table knows - v1beta2
// keeps rolloutAfter and rolloutBefore under spec.rollout - and a change
// of a field that rolls nothing out (spec.rollout.strategy, a template's
// expiry) is none.
func TestRolloutsOfEveryVersion(t *testing.T) {
	object := func(apiVersion, kind, spec string) string {
		return "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata: {name: cp, namespace: a}\nspec:\n" + spec
	}
	for _, tc := range []struct {
		name, apiVersion, kind, base, head string
		rolls                              bool
	}{
		{"v1beta2 expiry window", "controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane",
			"  rollout:\n    before:\n      certificatesExpiryDays: 30\n", "  rollout:\n    before:\n      certificatesExpiryDays: 21\n", true},
		{"v1beta2 rollout after", "controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane",
			"  version: v1.33.0\n", "  version: v1.33.0\n  rollout:\n    after: \"2027-01-04T00:00:00Z\"\n", true},
		{"v1beta2 strategy", "controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane",
			"  rollout:\n    strategy:\n      type: RollingUpdate\n", "  rollout:\n    strategy:\n      type: RollingUpdate\n      rollingUpdate:\n        maxSurge: 0\n", false},
		{"v1beta1 expiry window", "controlplane.cluster.x-k8s.io/v1beta1", "KubeadmControlPlane",
			"  rolloutBefore:\n    certificatesExpiryDays: 30\n", "  rolloutBefore:\n    certificatesExpiryDays: 21\n", true},
		{"v1beta2 machine deployment", "cluster.x-k8s.io/v1beta2", "MachineDeployment",
			"  replicas: 3\n", "  replicas: 3\n  rollout:\n    after: \"2027-01-04T00:00:00Z\"\n", true},
		{"template's expiry window", "controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlaneTemplate",
			"  template:\n    spec:\n      rollout:\n        before:\n          certificatesExpiryDays: 30\n",
			"  template:\n    spec:\n      rollout:\n        before:\n          certificatesExpiryDays: 21\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(model(object(tc.apiVersion, tc.kind, tc.base)), model(object(tc.apiVersion, tc.kind, tc.head)), fuzzNow)
			got := len(r.Rollouts) == 1 && r.Rollouts[0].Resource.Kind == tc.kind
			if got != tc.rolls || len(r.Rollouts) > 1 {
				t.Errorf("rollouts %+v; want a rollout of %s: %t", r.Rollouts, tc.kind, tc.rolls)
			}
		})
	}
}
