package rotate

import (
	"fmt"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/bundle"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/report"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// reissueReport lists the leaves that must be re-issued because their
// issuer is only among a bundle's previous CAs.
func (r *run) reissueReport() {
	r.results = append(r.results, report.ReissueResults(r.reissues())...)
}

// reissues computes the re-issue list of every rendered bundle: one entry
// per bundle, leaf location and issuer (targets fanned out to several
// namespaces agree or, if their previous CAs differ, the earliest date
// wins).
func (r *run) reissues() []report.Reissue {
	founds := map[string]report.Found{}
	var leaves []bundle.Leaf
	for _, f := range r.scan().Leaves() {
		leaves = append(leaves, bundle.Leaf{Cert: f.Cert, Where: f.Where()})
		founds[f.Where()+"\x00"+pki.FingerprintOf(f.Cert).String()] = f
	}
	var out []report.Reissue
	seen := map[string]int{}
	for _, b := range r.policy.Spec.TrustBundles {
		rb, ok := r.bundles[b.Name]
		if !ok {
			continue
		}
		for _, t := range rb.Targets {
			for _, x := range t.Outcome.Reissues(leaves, rb.Options, r.now) {
				leafFP, issuerFP := pki.FingerprintOf(x.Leaf.Cert).String(), pki.FingerprintOf(x.Issuer).String()
				f, ok := founds[x.Leaf.Where+"\x00"+leafFP]
				if !ok {
					continue
				}
				entry := report.Reissue{
					Resource: f.Ref, Key: f.Key(), Subject: pki.Subject(f.Cert), SHA256: leafFP, NotAfter: f.Cert.NotAfter.UTC(),
					Bundle: b.Name, Issuer: pki.Subject(x.Issuer), IssuerSHA256: issuerFP,
					IssuerLeavesAt: x.LeavesAt.UTC(), DaysLeft: report.DaysLeft(x.LeavesAt, r.now), State: report.ReissueState(x.State),
				}
				k := b.Name + "\x00" + x.Leaf.Where + "\x00" + leafFP + "\x00" + issuerFP
				if i, dup := seen[k]; dup {
					if entry.IssuerLeavesAt.Before(out[i].IssuerLeavesAt) {
						out[i] = entry
					}
					continue
				}
				seen[k] = len(out)
				out = append(out, entry)
			}
		}
	}
	report.SortReissues(out)
	return out
}

// Reissues runs the trust-bundle rules of the policy fnConfig over a copy
// of items at now and returns the leaves that must be re-issued; items are
// not changed. The policy's spec.now is ignored: a CI check asks about
// now, not about the render's pinned clock. It fails when the policy is
// invalid or a bundle cannot be rendered.
func Reissues(items []*yaml.RNode, fnConfig *yaml.RNode, now time.Time) ([]report.Reissue, error) {
	pol, err := policy.Decode(fnConfig)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kube.RefOf(fnConfig), err)
	}
	copies := make([]*yaml.RNode, len(items))
	for i, item := range items {
		copies[i] = item.Copy()
	}
	r := &run{
		policy:    pol,
		policyRef: kube.RefOf(fnConfig),
		now:       now.UTC(),
		items:     copies,
		index:     kube.NewIndex(copies),
		bundles:   map[string]renderedBundle{},
	}
	r.trustBundles()
	if errs := filter(r.results, framework.Error); len(errs) > 0 {
		return nil, ErrorResults(errs)
	}
	return r.reissues(), nil
}
