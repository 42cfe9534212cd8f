package rotate

import (
	"crypto/x509"
	"fmt"
	"strings"
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
//
// Targets of a bundle whose outcomes are alike (see outcomeKey) have the
// same re-issue list, so only the first of them is expanded: a bundle
// fanned out to many namespaces costs its targets plus its leaves, not
// their product.
func (r *run) reissues() []report.Reissue {
	founds := map[string]report.Found{}
	for _, f := range r.scan().Leaves() {
		founds[f.Where()+"\x00"+pki.FingerprintOf(f.Cert).String()] = f
	}
	leaves := r.leafIndex()
	var out []report.Reissue
	seen := map[string]int{}
	for _, b := range r.policy.Spec.TrustBundles {
		rb, ok := r.bundles[b.Name]
		if !ok {
			continue
		}
		alike := outcomeKeys{}
		for _, t := range rb.Targets {
			if !alike.add(t.Outcome) {
				continue
			}
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

// outcomeKeys remembers the outcomes of one bundle's targets by what
// Outcome.Reissues reads of them: the current and previous CAs in order,
// every decision, and the retirement of each previous CA. The options and the time are the bundle's, the same
// for all its targets, so two outcomes with one key list the same
// re-issues, and a later one adds nothing to the report (same entries,
// same dates). Certificates are told apart by pointer: an equal one
// parsed twice only makes the key differ, which costs a repeat, not a
// wrong answer.
type outcomeKeys struct {
	ids  map[*x509.Certificate]int
	seen map[string]bool
}

// add reports whether o is the first outcome of its key.
func (k *outcomeKeys) add(o bundle.Outcome) bool {
	if k.ids == nil {
		k.ids, k.seen = map[*x509.Certificate]int{}, map[string]bool{}
	}
	var b strings.Builder
	id := func(c *x509.Certificate) {
		n, ok := k.ids[c]
		if !ok {
			n = len(k.ids)
			k.ids[c] = n
		}
		fmt.Fprintf(&b, "%d,", n)
	}
	for _, c := range o.Current {
		id(c)
	}
	b.WriteString("|")
	// A previous CA's re-issue date counts from its retirement, which
	// each target records for itself.
	retired := func(c *x509.Certificate) {
		if at, ok := o.RetiredAt(c); ok {
			fmt.Fprintf(&b, "@%d,", at.Unix())
		}
	}
	for _, c := range o.Previous {
		id(c)
		retired(c)
	}
	for _, d := range o.Decisions {
		b.WriteString("|" + string(d.Reason) + ":")
		id(d.Cert)
		retired(d.Cert)
	}
	key := b.String()
	if k.seen[key] {
		return false
	}
	k.seen[key] = true
	return true
}

// Reissues runs the trust-bundle rules of the policy fnConfig over a copy
// of items at now and returns the leaves that must be re-issued; items are
// not changed. The policy's spec.now is ignored: a CI check asks about
// now, not about the render's pinned clock. It fails when the policy is
// invalid or a bundle cannot be rendered.
func Reissues(items []*yaml.RNode, fnConfig *yaml.RNode, now time.Time) ([]report.Reissue, error) {
	r, err := dryRun(items, fnConfig, now, (*run).trustBundles)
	if err != nil {
		return nil, err
	}
	return r.reissues(), nil
}

// Waves returns the roll-outs of restarts in waves (restart.waves) that
// the items record as not done under the policy fnConfig at now, with the
// waves still to roll; items are not changed. Like Reissues it ignores
// spec.now and fails when the policy is invalid or a bundle cannot be
// rendered.
func Waves(items []*yaml.RNode, fnConfig *yaml.RNode, now time.Time) ([]report.PendingWaves, error) {
	r, err := dryRun(items, fnConfig, now, (*run).trustBundles, (*run).restarts)
	if err != nil {
		return nil, err
	}
	var out []report.PendingWaves
	for _, w := range r.waves {
		pw := report.PendingWaves{Bundle: w.Bundle, Started: w.Series.Started, Waves: w.Series.Waves, Rolled: w.Series.Rolled,
			Interval: w.Interval, HeldUntil: w.HeldUntil}
		for _, p := range w.Pending {
			pw.Pending = append(pw.Pending, report.PendingWave{Number: p.Number, Due: p.Due, Workloads: p.Workloads})
		}
		out = append(out, pw)
	}
	return out, nil
}

// dryRun runs steps of the function over a copy of items at now.
func dryRun(items []*yaml.RNode, fnConfig *yaml.RNode, now time.Time, steps ...step) (*run, error) {
	pol, err := policy.Decode(fnConfig)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kube.RefOf(fnConfig), err)
	}
	copies := make([]*yaml.RNode, len(items))
	for i, item := range items {
		copies[i] = item.Copy()
	}
	r := newRun(pol, kube.RefOf(fnConfig), now.UTC(), copies, nil, nil)
	for _, s := range steps {
		s(r)
	}
	if errs := filter(r.results, framework.Error); len(errs) > 0 {
		return nil, ErrorResults(errs)
	}
	return r, nil
}
