package trustdiff

import (
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// What the model reads of each package's policies besides their
// explanation: each bundle's trust domain, and the workloads whose trust
// the bundle's restart rules say a mesh injects at admission.

// bundleInfo is what the model keeps of one bundle of one package.
type bundleInfo struct {
	domain string
	// injected are the workloads of the package whose pods receive the
	// bundle's trust at admission (restart.InjectedReaders: the rule
	// render rolls them by).
	injected []Consumer
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
				info := bundleInfo{domain: tb.Domain}
				for _, r := range restart.InjectedReaders(p.Items, tb.Restart) {
					info.injected = append(info.injected, Consumer{Resource: b.resource(r.Ref), Via: restart.ViaInjected.String(), Once: true, Never: r.Never})
				}
				b.bundles[p.Dir+"\x00"+tb.Name] = info
				b.domain(b.packageName(p.Dir), tb.Domain)
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
	if b.tree.Domains == nil {
		b.tree.Domains = map[string]map[string]bool{}
	}
	if b.tree.Domains[pkg] == nil {
		b.tree.Domains[pkg] = map[string]bool{}
	}
	b.tree.Domains[pkg][name] = true
}

// injectedConsumers adds to each trust object a policy's bundle renders
// the workloads whose pods that bundle's restart rules say are injected:
// those of the object's namespace, or, for a workload of a namespace the
// bundle writes no target in, every target (restart.ReadsEveryTarget).
// They read the trust once, at admission.
func (b *builder) injectedConsumers() {
	namespaces := map[string][]string{}
	for _, o := range b.tree.Trust {
		if o.Bundle != "" {
			k := o.pkg + "\x00" + o.Bundle
			namespaces[k] = append(namespaces[k], o.Resource.Namespace)
		}
	}
	for _, o := range b.tree.Trust {
		if o.Bundle == "" {
			continue
		}
		k := o.pkg + "\x00" + o.Bundle
		for _, c := range b.bundles[k].injected {
			if c.Resource.Namespace == o.Resource.Namespace || restart.ReadsEveryTarget(namespaces[k], c.Resource.Namespace) {
				o.Consumers = append(o.Consumers, c)
			}
		}
	}
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
