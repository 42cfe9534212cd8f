package trustdiff

import (
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// What the model reads of each package's policies besides their
// explanation: each bundle's trust domain, and its restart rules, by
// which its targets' readers include the workloads injected at admission
// or named (readers.go).

// bundleInfo is what the model keeps of one bundle of one package.
type bundleInfo struct {
	domain  string
	restart policy.Restart
}

// packages files each item under its package and reads each package's
// bundles. A policy that does not decode adds nothing (policy() reports
// it).
func (b *builder) packages(pkgs []Package) {
	for _, p := range pkgs {
		for _, item := range p.Items {
			b.pkg[item] = p.Dir
			if p.Decoded[item] != nil {
				b.decoded[item] = decoded{pol: p.Decoded[item]}
			}
		}
		for _, node := range p.Items {
			if !layout.IsPolicy(node) {
				continue
			}
			pol, err := b.decode(node)
			if err != nil {
				continue
			}
			for _, tb := range pol.Spec.TrustBundles {
				b.bundles[p.Dir+"\x00"+tb.Name] = bundleInfo{domain: tb.Domain, restart: tb.Restart}
				b.domain(b.packageName(p.Dir), tb.Domain)
				b.policySources(p.Dir, tb)
			}
		}
	}
}

// decoded is a policy decoded, or why it does not decode.
type decoded struct {
	pol *policy.RotationPolicy
	err error
}

// decode decodes policy node once for the model (packages, policy): as
// its Package's Decoded has it, else policy.Decode's.
func (b *builder) decode(node *yaml.RNode) (*policy.RotationPolicy, error) {
	d, ok := b.decoded[node]
	if !ok {
		d.pol, d.err = policy.Decode(node)
		b.decoded[node] = d
	}
	return d.pol, d.err
}

// domain records that package pkg has a bundle of trust domain name.
func (b *builder) domain(pkg, name string) {
	if name == "" {
		return
	}
	if b.model.domains == nil {
		b.model.domains = map[string]map[string]bool{}
	}
	if b.model.domains[pkg] == nil {
		b.model.domains[pkg] = map[string]bool{}
	}
	b.model.domains[pkg][name] = true
}

// packageName is package directory dir as the result shows it: below the
// top of the tree; "" for none.
func (b *builder) packageName(dir string) string {
	if dir == "" {
		return ""
	}
	if b.in.File != nil {
		dir = b.in.File(dir)
	}
	return kube.SafePath(dir)
}
