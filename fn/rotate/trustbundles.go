package rotate

import (
	"crypto/x509"
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
)

// scan builds the certificate inventory once per run.
func (r *run) scan() *inventory.Inventory {
	if r.inventory == nil {
		r.inventory = inventory.ScanWith(r.items, r.certs)
	}
	return r.inventory
}

// chainIndex indexes the certificates of the inventory once per run: the
// merge of every target, the re-issue list and the alerts all ask it what
// chains to a CA. A Held's ID is its position in the inventory.
func (r *run) chainIndex() *anchors.ChainIndex {
	if r.chains == nil {
		certs := r.scan().Certificates
		held := make([]anchors.Held, len(certs))
		for i, f := range certs {
			held[i] = anchors.Held{Cert: f.Cert, Where: f.Where(), ID: i, Supplied: f.Supplied}
		}
		r.chains = anchors.NewChainIndex(held, r.verifier())
	}
	return r.chains
}

// verifier returns the run's memoized signature check.
func (r *run) verifier() func(ca, cert *x509.Certificate) bool {
	if r.verify == nil {
		r.verify = anchors.NewVerifier()
	}
	return r.verify
}

// trustBundles renders every bundle of the policy (the trust bundle rules).
func (r *run) trustBundles() {
	env := trustbundle.Env{Index: r.index, Now: r.now, Chains: r.chainIndex(), PolicyRef: r.policyRef,
		Snapshots: trustbundle.NewSnapshots(r.items), Certs: r.certs, PreviousHeldUntil: r.previousHeldUntil, Domain: r.domainView}
	r.results = append(r.results, trustbundle.CheckInjectAnnotations(r.policy, r.index)...)
	var all []trustbundle.Rendered
	input := r.items[:len(r.items):len(r.items)] // the targets created below are not in the input
	for i := range r.policy.Spec.TrustBundles {
		b := &r.policy.Spec.TrustBundles[i]
		out := trustbundle.Render(b, fmt.Sprintf("spec.trustBundles[%d]", i), env)
		r.results = append(r.results, out.Results...)
		for _, t := range out.Targets {
			if t.Created {
				r.items = append(r.items, t.Node)
			}
		}
		r.bundles[b.Name] = out
		all = append(all, out)
	}
	// The annotations of a target object cover every bundle that writes
	// it; Finish completes the targets the bundles share with r.bundles.
	r.results = append(r.results, trustbundle.Finish(all, input, r.positions, r.index)...)
}

// expiryReport reports every certificate seen in the input, with a warning
// for each one inside expiry.warnWithin.
func (r *run) expiryReport() {
	inv := r.scan()
	if r.policy.Spec.ClusterAPI != nil {
		// The clusterAPI step reports machine expiry in its own context
		// (which machine, which window); say it once.
		only := inventory.Inventory{Certificates: inv.Certificates}
		for _, p := range inv.Problems {
			if !p.Expiry {
				only.Problems = append(only.Problems, p)
			}
		}
		inv = &only
	}
	r.results = append(r.results, ExpiryResults(inv, r.now, r.policy.Spec.Expiry.WarnWithin.Duration)...)
}
