// Package clusterapi implements spec.clusterAPI (docs/design/contract.md,
// Cluster API rules): it sets
// the certificate expiry fields of Cluster API's KubeadmControlPlane and
// KubeadmControlPlaneTemplate, optionally the fields of the EKS Anywhere
// certificate auto-renewal design, and rolls the etcd machines of
// etcdadm clusters whose certificates the input shows to be expiring.
//
// rules.go holds the pure rules (webhook validation, the expiry window,
// the next template name) over plain values and an explicit time; the
// other files map RNodes to and from them, editing nodes in place. What
// Machines and EKS Anywhere Clusters state about certificate expiry (the
// evidence of the etcd roll) is read by machineexpiry.go, the reader
// the expiry report shares.
package clusterapi

import (
	"fmt"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// applier is the state of one Apply.
type applier struct {
	// all is every input item: evidence is read from all of them, local
	// config included (a dump of Machines marked
	// config.kubernetes.io/local-config is read but never applied).
	all []*yaml.RNode
	// items are the items that may be managed (not local config).
	items []*yaml.RNode
	cfg   policy.ClusterAPI
	now   time.Time
	// evidence holds every expiry statement about the machines of each
	// EtcdadmCluster.
	evidence map[kube.Key][]evidence
	results  framework.Results
	// edits run only when planning found no error, so that a failed render
	// changes nothing.
	edits []func() error
	added []*yaml.RNode
	// pending are the template copies planned so far.
	pending map[kube.Key]copyOf
}

// Apply runs spec.clusterAPI over items at now. It edits items in place
// (never those marked as local config, which it only reads evidence from) and
// returns the resources it creates (infrastructure template copies) and its
// results. When any result is an error it changes nothing and returns no
// resources: every problem is reported, none is half-applied.
func Apply(items []*yaml.RNode, cfg policy.ClusterAPI, now time.Time) (added []*yaml.RNode, results framework.Results) {
	a := &applier{all: items, cfg: cfg, now: now, evidence: map[kube.Key][]evidence{}, pending: map[kube.Key]copyOf{}}
	for _, item := range items {
		if !kube.IsLocalConfig(item) {
			a.items = append(a.items, item)
		}
	}
	a.gatherEvidence()
	for _, node := range a.items {
		a.plan(node)
	}
	if a.results.ExitCode() != 0 {
		return nil, a.results
	}
	for _, edit := range a.edits {
		if err := edit(); err != nil {
			// Planning checked every path; an edit failing is a bug, but
			// it must still fail the render rather than pass silently.
			a.results = append(a.results, &framework.Result{Severity: framework.Error, Message: fmt.Sprintf("clusterAPI: %v", err)})
			return nil, a.results
		}
	}
	if a.rollsEtcd() {
		a.staleCopies()
	}
	return a.added, a.results
}

// plan dispatches one input object to the rule for its kind.
func (a *applier) plan(node *yaml.RNode) {
	row, version, known := machineKind(node)
	group, kind := row.Group, row.Kind
	fields, atVersion := row.At(version)
	ref := kube.RefOf(node)
	switch {
	case !known:
	case group == groupControlPlane && row.Writes():
		if !a.managed(kind, node) {
			return
		}
		if !atVersion {
			a.errorf(ref, "apiVersion", "unsupported apiVersion %s of %s (supported: %s); rotate-certs does not guess where its expiry field lives", node.GetApiVersion(), kind, row.Supported())
			return
		}
		if a.skipEncrypted(node, ref) {
			return
		}
		a.planKCP(node, ref, fields)
	case group == groupEtcdCluster && kind == policy.KindEtcdadmCluster:
		if !a.managed(kind, node) {
			return
		}
		if !atVersion {
			a.errorf(ref, "apiVersion", "unsupported apiVersion %s of EtcdadmCluster (supported: %s)", node.GetApiVersion(), row.Supported())
			return
		}
		if a.skipEncrypted(node, ref) {
			return
		}
		a.planEtcdadm(node, ref)
	case group == groupEKSAnywhere && kind == kindCluster:
		if !a.writesEKSA(node) {
			// Read as evidence only (see gatherEvidence).
			return
		}
		if !atVersion {
			a.errorf(ref, "apiVersion", "unsupported apiVersion %s of an EKS Anywhere Cluster (supported: %s); rotate-certs does not guess where the design field lives", node.GetApiVersion(), row.Supported())
			return
		}
		if a.skipEncrypted(node, ref) {
			return
		}
		a.planEKSA(node, ref)
	}
}

// writesEKSA reports whether the policy writes the design field of this EKS
// Anywhere Cluster: eksAnywhereDesignFields is on, kinds lists the EKS
// Anywhere Cluster and the selector matches it. Local-config objects are
// never written.
func (a *applier) writesEKSA(node *yaml.RNode) bool {
	return a.cfg.EKSAnywhereDesignFields && !kube.IsLocalConfig(node) && a.managed(policy.KindEKSAnywhereCluster, node)
}

// rollsEtcd reports whether the evidence-driven etcd roll can run at all:
// the design fields are off and kinds lists EtcdadmCluster.
func (a *applier) rollsEtcd() bool {
	return !a.cfg.EKSAnywhereDesignFields && a.cfg.HasKind(policy.KindEtcdadmCluster)
}

// managed reports whether the policy manages this object: its kind is
// listed and its labels match the selector.
func (a *applier) managed(kind string, node *yaml.RNode) bool {
	return a.cfg.HasKind(kind) && a.cfg.Selects(node.GetLabels())
}

// skipEncrypted reports (with a warning) an object encrypted with SOPS:
// editing it would break its MAC.
func (a *applier) skipEncrypted(node *yaml.RNode, ref kube.Ref) bool {
	if !kube.IsSOPSEncrypted(node) {
		return false
	}
	a.results = append(a.results, ref.Result(framework.Warning, "sops", "SOPS-encrypted: not changed; set its certificate expiry fields in the plaintext source"))
	return true
}

func (a *applier) errorf(ref kube.Ref, field, format string, args ...any) {
	a.results = append(a.results, ref.Result(framework.Error, field, fmt.Sprintf(format, args...)))
}

// fieldErr reports err as an error result at its own field when it is a
// *kube.FieldError, else at field.
func (a *applier) fieldErr(ref kube.Ref, field string, err error) {
	field, msg := kube.SplitFieldError(err, field)
	a.errorf(ref, field, "%s", msg)
}

func (a *applier) infof(ref kube.Ref, field, format string, args ...any) {
	a.results = append(a.results, ref.Result(framework.Info, field, fmt.Sprintf(format, args...)))
}

func (a *applier) warnf(ref kube.Ref, field, format string, args ...any) {
	a.results = append(a.results, ref.Result(framework.Warning, field, fmt.Sprintf(format, args...)))
}
