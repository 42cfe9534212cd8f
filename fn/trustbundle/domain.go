package trustbundle

import (
	"crypto/x509"
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// partialView ends the warning of a bundle whose trust domain the run does
// not see whole: what such a run does instead.
const partialView = "which this run does not see whole (it runs below the repository's top, on one package, or under kustomize, kpt, Argo CD or Flux): its previous CAs stay until they expire or a render at the repository's top ends the overlap, and CAs current only in the other packages' sources are not added"

// domainView returns the bundle's trust domain as the run sees it (nil
// when the bundle names none), and warns when the run sees it in part.
func (r *renderer) domainView() *anchors.DomainView {
	name := r.bundle.Domain
	if name == "" {
		return nil
	}
	var v *anchors.DomainView
	if r.env.Domain != nil {
		v = r.env.Domain(name)
	}
	if v == nil {
		v = &anchors.DomainView{Name: name}
	}
	if !v.Whole() {
		r.add(r.env.PolicyRef.Result(framework.Warning, r.path+".domain",
			fmt.Sprintf("bundle %q is in trust domain %s, %s", r.bundle.Name, kube.Quote(name), partialView)))
	}
	return v
}

// domainCurrent adds to current the CAs current in the other sources of
// the bundle's domain (seen whole), those not expired, each with where it
// was read.
func (r *renderer) domainCurrent(current []*x509.Certificate) []*x509.Certificate {
	for _, o := range r.view.Current(current) {
		if pki.Expired(o.Cert, r.env.Now) {
			continue // its own package reports it
		}
		current = append(current, o.Cert)
		if r.origins == nil {
			r.origins = map[pki.Fingerprint]origin{}
		}
		if fp := pki.FingerprintOf(o.Cert); r.origins[fp] == (origin{}) {
			r.origins[fp] = origin{where: "trust domain " + r.bundle.Domain + ": " + o.Where}
		}
	}
	return current
}

// Current returns the CAs current in bundle b's own sources (at policy
// field path path) that are valid at env.Now, each with where it was read:
// what the bundle adds to its trust domain. A source it cannot read adds
// nothing; the bundle's render reports it.
func Current(b *policy.TrustBundle, path string, env Env) []anchors.Origin {
	r := &renderer{bundle: b, path: path, env: env}
	current, ok := r.targetKinds()[0].current()
	if !ok {
		return nil
	}
	where := r.sources()
	var out []anchors.Origin
	for _, c := range current {
		if !pki.Expired(c, env.Now) {
			out = append(out, anchors.Origin{Cert: c, Where: where[pki.FingerprintOf(c)]})
		}
	}
	return out
}
