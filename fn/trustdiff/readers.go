package trustdiff

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Who reads a trust object is not decided here: restart.Readers, the rule
// render rolls by, answers it - the readers of a tree, by package, by the
// one namespace rule and the rule for copies - and restart.Reader.Once says
// whether a reader keeps the trust it read until it is restarted.

// setReaders sets the Readers of every trust object: what reads it
// (restart.Readers.Of) - for trust an object holds in a value of its own
// (embedded.go), the object's own readers - and for an object a policy's
// bundle renders, the workloads that bundle's restart rules say read it
// (OfBundle: injected at admission, named in restart.workloads), each of
// its package.
func (b *builder) setReaders() {
	namespaces := map[string][]string{}
	for _, o := range b.model.Trust {
		if o.Bundle != "" {
			k := o.pkg + "\x00" + o.Bundle
			namespaces[k] = append(namespaces[k], o.Resource.Namespace)
		}
	}
	for _, o := range b.model.Trust {
		node, read := b.trustNodes[o]
		if !read {
			continue
		}
		s := restart.Subject{Key: kube.Key{Kind: o.Resource.Kind, Namespace: o.Resource.Namespace, Name: o.Resource.Name}, Node: node, Field: b.embedded[o]}
		var readers []restart.Reader
		if info, ok := b.bundles[o.pkg+"\x00"+o.Bundle]; ok && o.Bundle != "" && s.Field == "" {
			readers = b.readers.OfBundle(s, restart.BundleScope{Restart: info.restart, Namespaces: namespaces[o.pkg+"\x00"+o.Bundle]})
		} else {
			readers = b.readers.Of(s)
		}
		o.Readers = b.modelReaders(readers)
	}
}

// presenters records, once per object, what reads node (res), which
// holds a certificate the tree presents.
func (b *builder) presenters(res Resource, node *yaml.RNode) {
	if _, done := b.model.presenters[res.id()]; done {
		return
	}
	s := restart.Subject{Key: kube.Key{Kind: res.Kind, Namespace: res.Namespace, Name: res.Name}, Node: node, File: res.File}
	b.model.presenters[res.id()] = b.modelReaders(b.readers.Of(s))
}

// modelReaders words restart's readers as the model's Readers.
func (b *builder) modelReaders(readers []restart.Reader) []Reader {
	out := make([]Reader, 0, len(readers))
	for _, rd := range readers {
		out = append(out, Reader{Resource: b.resource(rd.Ref), Via: rd.How().Via.String(), Once: rd.Once(), Never: rd.Never()})
	}
	return out
}

// readErrors reports what the readers could not read, as render refuses
// it: a workload whose pod template it cannot read (what it reads is not
// known), a rotate-certs.dev/reload value that is not a reload class
// (counted as a reader that loads its trust once).
func (b *builder) readErrors() {
	for _, e := range b.readers.Errors() {
		ref := kube.RefOf(e.Node)
		field, msg := kube.SplitFieldError(e.Err, "")
		line := fmt.Sprintf("%s %s: %s", ref, field, msg)
		if !e.Counted {
			line += " (what it reads is not known)"
		}
		b.problem(ref, line)
	}
}
