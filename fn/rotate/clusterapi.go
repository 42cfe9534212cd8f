package rotate

import "github.com/rotate-certs/rotate-certs/fn/clusterapi"

// clusterAPI applies spec.clusterAPI (SPEC section 6): expiry fields on
// KubeadmControlPlane(Template)s, the EKS Anywhere design fields, and the
// evidence-driven etcd roll, whose template copies join the output.
func (r *run) clusterAPI() {
	if r.policy.Spec.ClusterAPI == nil {
		return
	}
	added, results := clusterapi.Apply(r.items, *r.policy.Spec.ClusterAPI, r.now)
	r.results = append(r.results, results...)
	for _, n := range added {
		r.items = append(r.items, n)
		r.index.Add(n)
	}
}
