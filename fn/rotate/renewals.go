package rotate

import (
	"crypto/x509"
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/report"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// bundleSource is a Secret a bundle reads: one of its own sources, or a
// secret source of the trust-manager Bundle it writes.
type bundleSource struct {
	bundle string
	key    kube.Key
	where  string // the source as messages name it
}

// secretSources lists the Secrets each bundle of the policy reads, in
// policy order.
func (r *run) secretSources() []bundleSource {
	var out []bundleSource
	for i, b := range r.policy.Spec.TrustBundles {
		for j, s := range b.Sources {
			if s.Secret != nil {
				out = append(out, bundleSource{bundle: b.Name, key: kube.Key{Kind: "Secret", Namespace: s.Secret.Namespace, Name: s.Secret.Name},
					where: fmt.Sprintf("spec.trustBundles[%d].sources[%d]", i, j)})
			}
		}
		if b.Target.Kind != kube.TargetBundle {
			continue
		}
		node := r.index.GetIn(trustbundle.TrustManagerGroup, kube.Key{Kind: certmanager.KindBundle, Name: b.Target.Name})
		if node == nil {
			continue
		}
		for _, s := range certmanager.ReadBundleSources(node) {
			if s.Kind == "Secret" {
				out = append(out, bundleSource{bundle: b.Name, key: kube.Key{Kind: "Secret", Namespace: b.Target.TrustNamespace, Name: s.Name},
					where: fmt.Sprintf("a source of %s", kube.RefOf(node))})
			}
		}
	}
	return out
}

// forecasts returns, for every bundle source that a cert-manager CA
// Certificate of the input writes, when cert-manager renews it, from the
// CA the source holds now; and a result for each such Certificate that
// could not be read or whose Secret holds no certificate. Each bundle and
// Certificate once, in policy order.
func (r *run) forecasts() ([]certmanager.Forecast, framework.Results) {
	writers, problems := certmanager.Writers(r.items)
	var out []certmanager.Forecast
	var results framework.Results
	snapshots := trustbundle.NewSnapshots(r.items)
	seen := map[string]bool{}
	for _, src := range r.secretSources() {
		for _, p := range problems {
			if p.Secret == src.key && !seen["problem\x00"+p.Ref.String()] {
				seen["problem\x00"+p.Ref.String()] = true
				results = append(results, p.Ref.Result(framework.Warning, kube.FieldOf(p.Err), fmt.Sprintf(
					"bundle %q: %s writes the source %s, but %v: its renewal cannot be foreseen", src.bundle, p.Ref, src.key, p.Err)))
			}
		}
		for _, c := range writers[src.key] {
			if !c.IsCA || seen[src.bundle+"\x00"+c.Name()] {
				continue
			}
			seen[src.bundle+"\x00"+c.Name()] = true
			node := r.index.Get(src.key)
			if node == nil {
				node = snapshots.Get(src.key)
			}
			ca := r.issuedCA(node)
			if ca == nil {
				continue // the bundle reports a source that is missing or holds no certificate
			}
			out = append(out, certmanager.ForecastOf(c, src.bundle, fmt.Sprintf("%s (%s)", src.key, src.where), ca))
		}
	}
	return out, results
}

// issuedCA returns the certificate cert-manager issued into a Secret: the
// first certificate of its tls.crt, else of its ca.crt; nil when it holds
// neither.
func (r *run) issuedCA(secret *yaml.RNode) *x509.Certificate {
	if secret == nil {
		return nil
	}
	for _, key := range []string{"tls.crt", "ca.crt"} {
		v, found, err := kube.Lookup(secret, key)
		if err != nil || !found {
			continue
		}
		d, _ := r.certs.ScanPEM(v.Bytes)
		if len(d.Certificates) > 0 {
			return d.Certificates[0]
		}
	}
	return nil
}

// renewals warns, within expiry.warnWithin of (or past) the date
// cert-manager renews a CA that a bundle reads, naming the Certificate,
// the date, whether the key changes and what to do; farther renewals and
// disabled ones are info.
func (r *run) renewals() {
	forecasts, results := r.forecasts()
	r.results = append(r.results, results...)
	warn := r.policy.Spec.Expiry.WarnWithin.Duration
	for _, f := range forecasts {
		sev := framework.Info
		if f.Due(r.now, warn) {
			sev = framework.Warning
		}
		r.results = append(r.results, f.Certificate.Ref.Result(sev, f.Renewal.Field, f.Message(r.now)))
	}
}

// renewalRows are the forecasts as check's report lists them.
func (r *run) renewalRows() []report.Renewal {
	forecasts, _ := r.forecasts()
	out := make([]report.Renewal, 0, len(forecasts))
	for _, f := range forecasts {
		out = append(out, report.Renewal{Certificate: f.Certificate.Ref, Bundle: f.Bundle, Source: f.Source,
			SHA256: pki.FingerprintOf(f.CA).String(), NotAfter: f.CA.NotAfter, RenewsAt: f.Renewal.At, Rule: f.Renewal.Why,
			Disabled: f.Renewal.Disabled, Windows: f.Renewal.Windows, NewKey: f.Certificate.KeyChanges()})
	}
	return out
}
