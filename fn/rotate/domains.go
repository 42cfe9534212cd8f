package rotate

import (
	"fmt"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Package is one package of a repository, as the trust domains' pre-pass
// reads it: its directory (the name its certificates go by in the
// domain, and Processor.Package), its policy and its resources - items,
// or when items is nil, what Read returns.
type Package struct {
	Dir    string
	Policy *yaml.RNode
	items  []*yaml.RNode
	// Read reads the package's resources. Domains calls it only for a
	// package whose policy has a bundle in a domain, once, and keeps
	// nothing of what it returns but the certificates and CAs: a caller
	// that holds its packages unparsed (render) parses only those, one at
	// a time.
	Read func() ([]*yaml.RNode, error)
	// Decoded is Policy decoded (policy.Decode) when the caller already
	// decoded it; nil: Domains decodes it.
	Decoded *policy.RotationPolicy
}

// Domains builds the trust domains of a repository seen whole, once,
// before any package renders or is explained (the repository pass,
// fn/pass, is its one caller): for every domain a bundle names, the CAs
// current in the sources of the domain's bundles and the certificates of
// the domain's packages (anchors.NewDomain). at is the
// render time when set, else the policies' clock over wall (the first
// package of a domain decides its time). A policy that does not decode
// adds nothing (its own render reports it); two bundles of one domain with
// different retain settings are an error naming both. The result is read
// only, safe to share between renders running at once.
func Domains(pkgs []Package, at time.Time, wall func() time.Time) (map[string]*anchors.Domain, error) {
	if wall == nil {
		wall = time.Now
	}
	d := &domains{byName: map[string]*domainParts{}, certs: pki.NewCache()}
	for _, p := range pkgs {
		if err := d.add(p, at, wall); err != nil {
			return nil, err
		}
	}
	verify := anchors.NewVerifier()
	out := make(map[string]*anchors.Domain, len(d.byName))
	for name, parts := range d.byName {
		out[name] = anchors.NewDomain(name, parts.current, parts.held, verify, parts.now)
	}
	return out, nil
}

// domains gathers the parts of every domain, package by package.
type domains struct {
	byName map[string]*domainParts
	certs  *pki.Cache
}

// domainParts are what the packages of one domain bring to it.
type domainParts struct {
	first   member
	now     time.Time
	current []anchors.Origin
	held    []anchors.Held
	// last is the package whose certificates were added last: a package
	// with two bundles of the domain adds them once.
	last string
}

// member is one bundle of a domain, for the error about retain.
type member struct {
	pkg, bundle string
	policy      kube.Ref
	retain      policy.Retain
}

// add adds the domain bundles of package p.
func (d *domains) add(p Package, at time.Time, wall func() time.Time) error {
	var err error
	pol := p.Decoded
	if pol == nil {
		if pol, err = policy.Decode(p.Policy); err != nil {
			return nil // its own render reports it
		}
	}
	now := pol.Clock(wall)
	if !at.IsZero() {
		now = at.UTC()
	}
	var held []anchors.Held
	for i := range pol.Spec.TrustBundles {
		b := &pol.Spec.TrustBundles[i]
		if b.Domain == "" {
			continue
		}
		if p.items == nil && p.Read != nil {
			if p.items, err = p.Read(); err != nil {
				return err
			}
		}
		m := member{pkg: p.Dir, bundle: b.Name, policy: kube.RefOf(p.Policy), retain: b.Retain}
		parts := d.byName[b.Domain]
		if parts == nil {
			parts = &domainParts{first: m, now: now, last: "\x00"}
			d.byName[b.Domain] = parts
		} else if err := sameRetain(b.Domain, parts.first, m); err != nil {
			return err
		}
		env := trustbundle.Env{Index: kube.NewIndex(p.items), Now: now, PolicyRef: m.policy, Snapshots: trustbundle.NewSnapshots(p.items), Certs: d.certs}
		for _, o := range trustbundle.Current(b, fmt.Sprintf("spec.trustBundles[%d]", i), env) {
			o.Where += " in package " + kube.SafePath(p.Dir)
			parts.current = append(parts.current, o)
		}
		if parts.last == p.Dir {
			continue
		}
		if held == nil {
			held = heldIn(p, d.certs)
		}
		parts.held, parts.last = append(parts.held, held...), p.Dir
	}
	return nil
}

// heldIn returns the certificates of package p as its domain holds them:
// named with their package.
func heldIn(p Package, certs *pki.Cache) []anchors.Held {
	found := inventory.ScanWith(p.items, certs).Certificates
	out := make([]anchors.Held, len(found))
	for i, f := range found {
		out[i] = anchors.Held{Cert: f.Cert, Where: f.Where() + " in package " + kube.SafePath(p.Dir), ID: i, Supplied: f.Supplied, Package: p.Dir}
	}
	return out
}

// sameRetain returns an error when bundles a and b of domain name do not
// set the same retain: one overlap is decided for the whole domain.
func sameRetain(name string, a, b member) error {
	ra, rb := retainText(a.retain), retainText(b.retain)
	if ra == rb {
		return nil
	}
	return fmt.Errorf("trust domain %s: bundle %s of policy %s in package %s sets retain %s, but bundle %s of policy %s in package %s sets retain %s: the bundles of a domain must set the same retain",
		kube.Quote(name), kube.Quote(a.bundle), kube.Safe(a.policy.Name), kube.SafePath(a.pkg), ra,
		kube.Quote(b.bundle), kube.Safe(b.policy.Name), kube.SafePath(b.pkg), rb)
}

// retainText is a defaulted retain as one phrase.
func retainText(r policy.Retain) string {
	s := fmt.Sprintf("{maxPrevious: %d, protectIssuers: %t", *r.MaxPrevious, *r.ProtectIssuers)
	if r.For != nil {
		s += ", for: " + r.For.Duration.String()
	}
	if r.DropUnusedAfter != nil {
		s += ", dropUnusedAfter: " + r.DropUnusedAfter.Duration.String()
	}
	return s + "}"
}

// domainView is the run's view of trust domain name: whole when the
// processor was given the repository's domains, else partial (nil).
func (r *run) domainView(name string) *anchors.DomainView {
	d, ok := r.domains[name]
	if !ok {
		return nil
	}
	if r.views == nil {
		r.views = map[string]*anchors.DomainView{}
	}
	v, ok := r.views[name]
	if !ok {
		v = &anchors.DomainView{Name: name, Domain: d, Package: r.pkg}
		r.views[name] = v
	}
	return v
}
