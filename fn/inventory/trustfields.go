package inventory

import (
	"bytes"
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Trust the API server and its add-ons keep outside Secrets and
// ConfigMaps: the caBundle fields it reads to call webhooks and aggregated
// APIs, ClusterTrustBundles, and trust-manager Bundles' inLine sources.
// Every certificate found there is reported like one in a Secret.

// injectReader returns the scanner of an object whose caBundle fields
// the trust bundles inject, by its row of the inject-kind table: every
// webhook's clientConfig.caBundle of a webhook configuration, the one
// caBundle of its clientConfig otherwise.
func injectReader(k kube.InjectKind) func(s *scanner, ref func() kube.Ref, item *yaml.RNode) {
	if k.Webhooks {
		return (*scanner).webhooks
	}
	path := append(append([]string(nil), k.ClientConfig...), "caBundle")
	field := kube.JoinPath(path)
	return func(s *scanner, ref func() kube.Ref, item *yaml.RNode) { s.caBundle(ref, item, field, path...) }
}

// targetReader returns the scanner of a target kind's objects by how its
// row says it holds a bundle: PEM at a field (a ClusterTrustBundle's
// spec.trustBundle) or a trust-manager Bundle's inLine sources; nil for the
// kinds that hold it at keys (kube.StoreKeys), whose values the scan reads
// one by one (holdsKeys).
func targetReader(d kube.TargetDescriptor) func(s *scanner, ref func() kube.Ref, item *yaml.RNode) {
	switch d.Store {
	case kube.StoreField:
		field := kube.JoinPath(d.Field)
		return func(s *scanner, ref func() kube.Ref, item *yaml.RNode) {
			if v := stringAt(item, d.Field...); v != "" {
				s.pem(ref, spot{field: field, place: PlaceTrustField}, []byte(v), true)
			}
		}
	case kube.StoreSources:
		return (*scanner).trustManagerInLines
	}
	return nil
}

// holdsKeys reports whether objects of kind in API group are read value by
// value: the kinds of targets' rows that hold a bundle at keys
// (kube.StoreKeys: core Secrets and ConfigMaps), whichever object of the
// kind holds certificates.
func holdsKeys(targets kube.TargetTable, kind, group string) bool {
	d, ok := targets.Lookup(kube.TargetKind(kind))
	return ok && d.Store == kube.StoreKeys && d.Group == group
}

// trustFields reads item when it is of a kind of the inject-kind table or
// a cluster-scoped kind of the scan's target-kind table, and reports
// whether it was.
func (s *scanner) trustFields(item *yaml.RNode, kind, group string) bool {
	var read func(s *scanner, ref func() kube.Ref, item *yaml.RNode)
	if k, ok := kube.InjectKinds().Lookup(kind); ok && k.Group == group {
		read = injectReader(k)
	} else {
		d, found := s.targets.Lookup(kube.TargetKind(kind))
		if !found || d.Group != group {
			return false
		}
		if read = targetReader(d); read == nil {
			return false
		}
	}
	read(s, lazyRef(item), item)
	return true
}

// webhooks reads webhooks[].clientConfig.caBundle, naming each field by
// its webhook's name as rotate-certs writes it.
func (s *scanner) webhooks(ref func() kube.Ref, item *yaml.RNode) {
	eachMapping(item, []string{"webhooks"}, func(i int, e *yaml.RNode) {
		at := fmt.Sprintf("webhooks[%d]", i)
		if name := stringAt(e, "name"); kube.ValidObjectName(name) { // a hostile name is not repeated
			at = "webhooks[name=" + name + "]"
		}
		s.caBundle(ref, e, at+".clientConfig.caBundle", "clientConfig", "caBundle")
	})
}

// eachMapping calls fn with each mapping entry of the list at path under
// item, and its index.
func eachMapping(item *yaml.RNode, path []string, fn func(i int, e *yaml.RNode)) {
	seq, err := item.Pipe(yaml.Lookup(path...))
	if err != nil || seq == nil || seq.YNode().Kind != yaml.SequenceNode {
		return
	}
	entries, _ := seq.Elements()
	for i, e := range entries {
		if e.YNode().Kind == yaml.MappingNode {
			fn(i, e)
		}
	}
}

// caBundle reads the base64 caBundle at path under node; field names it.
// A caBundle can only hold certificates, so anything unreadable is a
// problem. One that decodes to blank text is empty, as the trust bundles
// read it: Cg== (a newline) is the placeholder controller-gen wrote into
// webhook and CRD manifests for cainjector to fill, which many projects
// still ship.
func (s *scanner) caBundle(ref func() kube.Ref, node *yaml.RNode, field string, path ...string) {
	v := stringAt(node, path...)
	if v == "" {
		return
	}
	b, err := kube.DecodeBase64(v)
	if err != nil {
		s.problem(ref(), field, "not base64: %v", err)
		return
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	s.pem(ref, spot{field: field, place: PlaceTrustField}, b, true)
}

// trustManagerInLines reads a Bundle's inLine sources (the user's, and the
// previous CAs rotate-certs keeps there).
func (s *scanner) trustManagerInLines(ref func() kube.Ref, item *yaml.RNode) {
	eachMapping(item, []string{"spec", "sources"}, func(i int, e *yaml.RNode) {
		if v := stringAt(e, "inLine"); v != "" {
			s.pem(ref, spot{field: fmt.Sprintf("spec.sources[%d].inLine", i), place: PlaceTrustField}, []byte(v), true)
		}
	})
}

// stringAt returns the scalar at path under node, "" when absent or not a
// scalar.
func stringAt(node *yaml.RNode, path ...string) string {
	if node.YNode().Kind != yaml.MappingNode {
		return ""
	}
	v, err := node.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil || v.YNode().Kind != yaml.ScalarNode || v.YNode().ShortTag() == yaml.NodeTagNull {
		return ""
	}
	return v.YNode().Value
}
