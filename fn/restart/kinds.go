package restart

import (
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Job kinds: their pods read a bundle at start like any other, but a Job
// is never rolled - its next pod reads the new bundle by itself.
const (
	kindJob     = "Job"
	kindCronJob = "CronJob"
)

// Kinds whose pods read Secrets and ConfigMaps but which rotate-certs
// leaves alone when trust changes: a ReplicaSet is normally owned by a
// Deployment (the Deployment is what rolls), a ReplicationController
// starts only its new pods from a changed template (it never rolls the
// running ones), and a Pod's spec cannot be changed in place.
const (
	kindReplicaSet            = "ReplicaSet"
	kindReplicationController = "ReplicationController"
	kindPod                   = "Pod"
)

// role is what rotate-certs does with a kind whose pods read Secrets and
// ConfigMaps.
type role int

const (
	// rolled kinds are rolled by writing the trust-hash into their pod
	// template.
	rolled role = iota
	// reported kinds are read by the restart rules and never rolled: a
	// bundle change is an info result.
	reported
	// listed kinds are only listed as readers of a CA by init; the restart
	// rules do not read them.
	listed
)

// podKind is what rotate-certs knows of a kind with a pod template.
type podKind struct {
	apiVersions []string
	// template is the path of the pod template; empty for a Pod, which is
	// its own template.
	template []string
	role     role
}

// podKinds is the one list of the kinds whose pod templates rotate-certs
// reads, at the API versions whose schema it knows: the restart rules read
// the rolled and reported ones, init lists readers of every one. A kind at
// another API version is not read by either.
var podKinds = map[string]podKind{
	policy.KindDeployment:     {[]string{"apps/v1"}, []string{"spec", "template"}, rolled},
	policy.KindStatefulSet:    {[]string{"apps/v1"}, []string{"spec", "template"}, rolled},
	policy.KindDaemonSet:      {[]string{"apps/v1"}, []string{"spec", "template"}, rolled},
	policy.KindRollout:        {[]string{"argoproj.io/v1alpha1"}, []string{"spec", "template"}, rolled},
	kindJob:                   {[]string{"batch/v1"}, []string{"spec", "template"}, reported},
	kindCronJob:               {[]string{"batch/v1", "batch/v1beta1"}, []string{"spec", "jobTemplate", "spec", "template"}, reported},
	kindReplicaSet:            {[]string{"apps/v1"}, []string{"spec", "template"}, listed},
	kindReplicationController: {[]string{"v1"}, []string{"spec", "template"}, listed},
	kindPod:                   {[]string{"v1"}, nil, listed},
}

// kindOf returns what rotate-certs knows of node's kind at its API
// version.
func kindOf(node *yaml.RNode) (podKind, bool) {
	k, ok := podKinds[node.GetKind()]
	if !ok || !slices.Contains(k.apiVersions, node.GetApiVersion()) {
		return podKind{}, false
	}
	return k, true
}

// isWorkload reports whether node is one of the kinds the restart rules
// read (readWorkload): a Deployment, StatefulSet, DaemonSet, Argo Rollout, Job or
// CronJob, at an API version rotate-certs knows.
func isWorkload(node *yaml.RNode) bool {
	k, ok := kindOf(node)
	return ok && k.role != listed
}

// IsReader reports whether node's pods read Secrets and ConfigMaps through
// a pod template rotate-certs can read (ReadTemplate): a workload
// (isWorkload), a ReplicaSet, a ReplicationController or a Pod.
func IsReader(node *yaml.RNode) bool {
	_, ok := kindOf(node)
	return ok
}
