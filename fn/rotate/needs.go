package rotate

import (
	"github.com/rotate-certs/rotate-certs/fn/alerts"
	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/clusterapi"
	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Needs says which items of a list the function reads under the policy
// fnConfig (package resio parses only those; the others pass through as
// text): the union (kube.Union) of what each step declares it reads, in
// the reads.go of the package that reads - trustbundle, certmanager,
// restart, clusterapi, inventory, alerts; see the steps' table - and of what
// the processor reads itself (ownReads). A step that comes to read
// another kind, or other items of a kind, says so in its package's
// declaration; TestStepsReadWhatTheyDeclare fails when a step's output
// depends on an item its declaration declines. When the policy does not
// decode, every item of every kind any step reads is read (the run fails
// on the policy).
func Needs(fnConfig *yaml.RNode) resio.Selection {
	pol, err := policy.Decode(fnConfig)
	if err != nil {
		return resio.Selection{Kind: needsKind}
	}
	p := readPlan(pol.Spec.TrustBundles)
	return resio.Selection{Kind: p.Kind, Item: p.Item}
}

// needsKind reports whether a step may read resources of this apiVersion
// and kind: whether any declaration names it (no policy changes which
// kinds are read, only which items of some). Anything else (a Service, an
// unrelated custom resource) is passed through without being parsed.
func needsKind(apiVersion, kind string) bool { return kinds.Kind(apiVersion, kind) }

// kinds is the plan under a policy without bundles, for its kinds.
var kinds = readPlan(nil)

// readPlan is the union of what the steps declare they read under bundles
// (the policy's spec.trustBundles), each declaration once, and of what the
// processor reads itself.
func readPlan(bundles []policy.TrustBundle) *kube.ReadPlan {
	var all []kube.Reads
	seen := map[reader]bool{}
	for _, s := range steps {
		for _, rd := range s.reads {
			if !seen[rd] {
				seen[rd] = true
				all = append(all, rd.declare(bundles))
			}
		}
	}
	return kube.Union(append(all, ownReads())...)
}

// reader names the package whose declaration of what it reads (kube.Reads)
// a step reads the input through.
type reader int

const (
	readsTrustBundles reader = iota // trustbundle.Reads
	readsRenewals                   // certmanager.Reads
	readsRestarts                   // restart.Reads
	readsClusterAPI                 // clusterapi.Reads
	readsInventory                  // inventory.Reads
	readsAlerts                     // alerts.Reads
)

// declare returns rd's declaration under bundles.
func (rd reader) declare(bundles []policy.TrustBundle) kube.Reads {
	switch rd {
	case readsTrustBundles:
		return trustbundle.Reads(bundles)
	case readsRenewals:
		return certmanager.Reads()
	case readsRestarts:
		return restart.Reads(bundles)
	case readsClusterAPI:
		return clusterapi.Reads()
	case readsInventory:
		return inventory.Reads()
	}
	return alerts.Reads()
}

// ownReads is what the processor reads itself, before any step
// (checkItems): every object of its own API group (a RotationPolicy that
// render hands over with its package), held to the rules of every object
// the function reads; and, of every kind the steps read only in part, an
// object that defines a mapping key twice, which it refuses (the plan
// reads one whose metadata is not a mapping, which it refuses too, before
// it asks any rule: kube.Union).
func ownReads() kube.Reads {
	return kube.Reads{
		Groups:    []string{kube.GroupOf(policy.APIVersion)},
		EveryKind: func(item *yaml.RNode) bool { return len(kube.DuplicateKeysOf(item)) > 0 },
	}
}
