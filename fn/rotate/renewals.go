package rotate

import (
	"crypto/x509"
	"fmt"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/rotate-certs/rotate-certs/fn/why"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// bundleSource is a Secret a bundle reads: one of its own sources, or a
// secret source of the trust-manager Bundle it writes.
type bundleSource struct {
	bundle string
	key    kube.Key
	where  string // the source as messages name it
	// selected is set when a source selects the Secret by label rather
	// than naming it: git may hold no copy of it.
	selected bool
}

// secretSources lists the Secrets each bundle of the policy reads, in
// policy order; writers are the input's cert-manager Certificates by the
// Secret they write.
func (r *run) secretSources(writers map[kube.Key][]certmanager.Certificate, snapshots *trustbundle.Snapshots) []bundleSource {
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
		ns := b.Target.TrustNamespace
		for _, s := range certmanager.ReadBundleSources(node) {
			switch {
			case s.Kind != "Secret":
			case s.Selector == nil:
				out = append(out, bundleSource{bundle: b.Name, key: kube.Key{Kind: "Secret", Namespace: ns, Name: s.Name},
					where: fmt.Sprintf("a source of %s", kube.RefOf(node))})
			default:
				where := fmt.Sprintf("spec.sources[%d] of %s, selector %s", s.Index, kube.RefOf(node), selectorText(*s.Selector))
				for _, key := range r.selectedSecrets(ns, *s.Selector, writers, snapshots) {
					out = append(out, bundleSource{bundle: b.Name, key: key, where: where, selected: true})
				}
			}
		}
	}
	return out
}

// selectedSecrets returns the Secrets of the trust namespace ns that a
// trust-manager source's selector selects, as far as the input tells:
// the Secrets it holds there (manifests, then snapshots) whose labels
// match, then, by name, the Secrets that cert-manager Certificates of ns
// write with labels that match (Certificate.SecretLabels) - git may hold
// no copy of those yet.
func (r *run) selectedSecrets(ns string, sel kube.Selector, writers map[kube.Key][]certmanager.Certificate, snapshots *trustbundle.Snapshots) []kube.Key {
	var out []kube.Key
	seen := map[kube.Key]bool{}
	for _, n := range trustbundle.SelectSources(r.index, snapshots, "Secret", ns, sel) {
		k := kube.KeyOf(n)
		seen[k] = true
		out = append(out, k)
	}
	var written []kube.Key
	for k, certs := range writers {
		if k.Namespace == ns && !seen[k] && slices.ContainsFunc(certs, func(c certmanager.Certificate) bool { return sel.Matches(c.SecretLabels()) }) {
			written = append(written, k)
		}
	}
	slices.SortFunc(written, func(a, b kube.Key) int { return strings.Compare(a.Name, b.Name) })
	return append(out, written...)
}

// selectorText is a label selector as messages name it: kubectl's syntax,
// quoted; the empty selector selects every Secret.
func selectorText(s kube.Selector) string {
	if s.Empty() {
		return "{} (every Secret of the trust namespace)"
	}
	return kube.Quote(s.String())
}

// forecasts returns, for every bundle source that a cert-manager CA
// Certificate of the input writes, when cert-manager renews it, from the
// CA the source holds now; and a result for each such Certificate that
// could not be read, or that a selector selects and whose Secret the
// input does not hold. Each bundle and Certificate once, in policy order.
func (r *run) forecasts() ([]certmanager.Forecast, framework.Results) {
	writers, problems := certmanager.Writers(r.items)
	var out []certmanager.Forecast
	var results framework.Results
	snapshots := trustbundle.NewSnapshots(r.items)
	seen := map[string]bool{}
	for _, src := range r.secretSources(writers, snapshots) {
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
			switch {
			case ca != nil:
				out = append(out, certmanager.ForecastOf(c, src.bundle, fmt.Sprintf("%s (%s)", src.key, src.where), ca))
			case node == nil && src.selected:
				results = append(results, unseenSelected(c, src))
			}
			// else the bundle reports a source that is missing or holds no certificate
		}
	}
	return out, results
}

// unseenSelected is the warning on a CA Certificate whose Secret a
// selector source selects by the labels cert-manager writes, when the
// input holds no copy of that Secret: the render cannot read its CA, so
// neither its renewal nor the CA it replaces can be known.
func unseenSelected(c certmanager.Certificate, src bundleSource) *framework.Result {
	return c.Ref.Result(framework.Warning, "spec.secretTemplate.labels", fmt.Sprintf(
		"bundle %q: CA Certificate %s writes %s, which a source selects by the labels cert-manager sets on it (%s), but the input holds no copy of that Secret: "+
			"its renewal cannot be foreseen and the render cannot carry its CA once it leaves%s",
		src.bundle, c.Name(), src.key, src.where, trustbundle.SnapshotHint(src.key)))
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
func (r *run) renewalRows() []why.Renewal {
	forecasts, _ := r.forecasts()
	out := make([]why.Renewal, 0, len(forecasts))
	for _, f := range forecasts {
		out = append(out, why.Renewal{Certificate: f.Certificate.Ref, Bundle: f.Bundle, Source: f.Source,
			SHA256: pki.FingerprintOf(f.CA).String(), NotAfter: f.CA.NotAfter, RenewsAt: f.Renewal.At, Rule: f.Renewal.Why,
			Disabled: f.Renewal.Disabled, Windows: f.Renewal.Windows, NewKey: f.Certificate.KeyChanges()})
	}
	return out
}
