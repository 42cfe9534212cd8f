package rotate

import (
	"fmt"
	"path"

	"github.com/rotate-certs/rotate-certs/fn/alerts"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// alerts writes the PrometheusRule of spec.alerts: an alert for every
// certificate a bundle holds (role ca) and every leaf of the input that
// one of those CAs signed (role leaf).
func (r *run) alerts() {
	a := r.policy.Spec.Alerts
	if a == nil {
		return
	}
	var certs []alerts.Certificate
	leaves, verify := r.leafIndex(), r.verifier()
	for _, b := range r.policy.Spec.TrustBundles {
		rb, ok := r.bundles[b.Name]
		if !ok {
			continue
		}
		// Targets that render the same bytes hold the same CAs, which
		// signed the same leaves: their leaf entries would repeat the
		// first target's (alerts.Groups merges repeats), so they are
		// listed once per distinct bundle content, not once per target.
		listed := map[string]bool{}
		for _, t := range rb.Targets {
			where := t.Where()
			cas := t.Outcome.Certificates()
			for _, c := range cas {
				certs = append(certs, alerts.Certificate{Cert: c, Bundle: b.Name, Role: alerts.RoleCA, Where: []string{where}})
			}
			if listed[t.Hash] {
				continue
			}
			listed[t.Hash] = true
			for _, l := range leaves.SignedByAny(cas, verify) {
				certs = append(certs, alerts.Certificate{Cert: l.Cert, Bundle: b.Name, Role: alerts.RoleLeaf, Where: []string{l.Where}})
			}
		}
	}
	warn, fail := r.policy.Spec.Expiry.WarnWithin.Duration, r.policy.Spec.Expiry.FailWithin.Duration
	groups := alerts.Groups(certs, warn, fail)

	key := kube.Key{Kind: alerts.Kind, Namespace: a.Namespace, Name: a.Name}
	node := r.index.GetIn(kube.GroupOf(alerts.APIVersion), key)
	created := false
	if node == nil || node.GetApiVersion() != alerts.APIVersion {
		dir := ""
		if r.policyRef.Path != "" {
			dir = path.Dir(r.policyRef.Path)
		}
		node = alerts.New(a.Namespace, a.Name, dir)
		created = true
	}
	changed, err := alerts.Apply(node, groups, a.Labels)
	if err != nil {
		r.results = append(r.results, r.policyRef.Result(framework.Error, "spec.alerts", err.Error()))
		return
	}
	if created {
		r.items = append(r.items, node)
		r.index.Add(node)
	}
	rules := 0
	for _, g := range groups {
		rules += len(g.Rules)
	}
	state := "unchanged"
	switch {
	case created:
		state = "created"
	case changed:
		state = "updated"
	}
	msg := fmt.Sprintf("alerts: %d alerting rule(s) in %d group(s) for %d certificate(s): warning from NotAfter-%s, critical from NotAfter-%s; %s",
		rules, len(groups), rules/2, warn, fail, state)
	if len(groups) == 0 {
		msg += "; no trust bundle holds a certificate, so the rule has no alerts"
	}
	r.results = append(r.results, kube.RefOf(node).Result(framework.Info, "spec.groups", msg))
}
