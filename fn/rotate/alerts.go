package rotate

import (
	"fmt"
	"path"

	"github.com/rotate-certs/rotate-certs/fn/alerts"
	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// alerts writes the PrometheusRule of spec.alerts: an alert for every
// certificate a bundle holds (role ca) except a previous CA nothing
// chains to (it leaves the bundle by itself: its expiry is no incident),
// for every certificate of the input that chains to one of those CAs
// (role leaf or issuer), and for every certificate to re-issue, at the
// date the CA it needs leaves the bundle (role reissue).
func (r *run) alerts() {
	a := r.policy.Spec.Alerts
	if a == nil {
		return
	}
	var certs []alerts.Certificate
	for _, b := range r.policy.Spec.TrustBundles {
		if rb, ok := r.bundles[b.Name]; ok {
			certs = append(certs, r.bundleAlerts(b.Name, rb)...)
		}
	}
	warn, fail := r.policy.Spec.Expiry.WarnWithin.Duration, r.policy.Spec.Expiry.FailWithin.Duration
	drifts := r.drifts()
	groups := alerts.WithDrift(alerts.Groups(certs, warn, fail), drifts)

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
	rules := -len(drifts)
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
	if len(drifts) > 0 {
		msg += fmt.Sprintf("; %d alert(s) on a CA that cert-manager renews in the cluster before git catches up (%s)", len(drifts), alerts.DriftAlertName)
	}
	if len(groups) == 0 {
		msg += "; no trust bundle holds a certificate, so the rule has no alerts"
	}
	r.results = append(r.results, kube.RefOf(node).Result(framework.Info, "spec.groups", msg))
}

// bundleAlerts lists what bundle's alerts watch. Targets that render the
// same bytes hold the same CAs, to which the same certificates chain:
// their entries would repeat the first target's (alerts.Groups merges
// repeats), so the chained certificates and re-issues are listed once per
// distinct bundle content, not once per target.
func (r *run) bundleAlerts(name string, rb trustbundle.Rendered) []alerts.Certificate {
	var certs []alerts.Certificate
	listed := map[string]bool{}
	for _, t := range rb.Targets {
		where := t.Where()
		unused := pki.NewSet()
		for _, f := range t.Outcome.Fates {
			if f.State == anchors.FateUnused {
				unused.Add(f.Cert)
			}
		}
		cas := t.Outcome.Certificates()
		for _, c := range cas {
			if !unused.Has(c) {
				certs = append(certs, alerts.Certificate{Cert: c, Bundle: name, Role: alerts.RoleCA, Where: []string{where}})
			}
		}
		if listed[t.Hash] {
			continue
		}
		listed[t.Hash] = true
		for _, h := range r.chainIndex().SignedByAny(cas, r.now) {
			if h.Supplied {
				continue
			}
			role := alerts.RoleLeaf
			if pki.IsCA(h.Cert) {
				role = alerts.RoleIssuer
			}
			certs = append(certs, alerts.Certificate{Cert: h.Cert, Bundle: name, Role: role, Where: []string{h.Where}})
		}
		for _, x := range t.Outcome.Reissues() {
			if !x.LeavesAt.Before(x.Cert.Cert.NotAfter) {
				continue // its own NotAfter alert comes first
			}
			c := alerts.Certificate{Cert: x.Cert.Cert, Bundle: name, Role: alerts.RoleReissue, Where: []string{x.Cert.Where},
				Issuer: x.IssuerName, Due: x.LeavesAt}
			if x.Issuer != nil {
				c.IssuerSHA256 = pki.FingerprintOf(x.Issuer).String()
			}
			certs = append(certs, c)
		}
	}
	return certs
}

// drifts are the bundle sources a cert-manager Certificate writes, with
// the CA this render saw in each: the drift alerts watch them.
func (r *run) drifts() []alerts.Drift {
	forecasts, _ := r.forecasts()
	out := make([]alerts.Drift, 0, len(forecasts))
	for _, f := range forecasts {
		out = append(out, alerts.Drift{Bundle: f.Bundle, Namespace: f.Certificate.Ref.Namespace, Name: f.Certificate.Ref.Name,
			Source: f.Certificate.Key().String(), NotAfter: f.CA.NotAfter, SHA256: pki.FingerprintOf(f.CA).String()})
	}
	return out
}
