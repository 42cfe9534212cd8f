package rotate

import "github.com/rotate-certs/rotate-certs/fn/clusterapi"

// clusterAPI applies spec.clusterAPI: expiry fields on
// KubeadmControlPlane(Template)s, the EKS Anywhere design fields, and the
// evidence-driven etcd roll, whose template copies join the output; and
// warns when its selector matches nothing.
func (r *run) clusterAPI() {
	if r.policy.Spec.ClusterAPI == nil {
		return
	}
	added, results := clusterapi.Apply(r.items, *r.policy.Spec.ClusterAPI, r.now)
	r.results = append(r.results, results...)
	if res := clusterapi.CheckSelector(r.items, *r.policy.Spec.ClusterAPI, r.policyRef); res != nil {
		r.results = append(r.results, res)
	}
	for _, n := range added {
		r.items = append(r.items, n)
		r.index.Add(n)
	}
}
