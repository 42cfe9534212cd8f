package trustbundle

import (
	"crypto/x509"
	"fmt"
	"iter"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A trust-manager Bundle (trust.cert-manager.io/v1alpha1) unions its
// sources into ConfigMaps or Secrets in every namespace, and keeps no
// history: when a source CA is replaced, the old one is gone from every
// target at once. rotate-certs never edits the user's sources; it reads
// them (the Secrets and ConfigMaps of the trust namespace that are in the
// input, and the user's inLine sources) as the bundle's current CAs, and
// keeps one inLine source of its own that carries the previous CAs
// through the overlap. That source also pins the CAs the sources hold at
// this render: when cert-manager replaces a CA Secret in the cluster,
// trust-manager keeps distributing the CA git last saw beside the new one,
// and when the CA leaves the sources in git it is already in the Bundle's
// data, so it becomes previous without any annotation adding it. The seen
// annotation on the Bundle records which of the pinned CAs were the
// sources'.

const (
	// TrustManagerGroup is the API group of trust-manager's Bundle.
	TrustManagerGroup = "trust.cert-manager.io"
	// trustManagerVersion is the Bundle apiVersion rotate-certs writes.
	trustManagerVersion = TrustManagerGroup + "/v1alpha1"
	// ManagedByLine starts the first line of an inLine source that a tool
	// owns: "# managed-by: <owner>". rotate-certs' own reads
	// "# managed-by: rotate-certs.dev/bundle=<bundle name>".
	ManagedByLine = "# managed-by: "
	// ownOwner is the owner rotate-certs writes, before the bundle name.
	ownOwner = "rotate-certs.dev/bundle="
	// maxBundleSources is the most sources trust-manager's CRD accepts.
	maxBundleSources = 100
)

// ownInLineNote is the line after the marker of rotate-certs' inLine
// source, for the person who reads the Bundle.
const ownInLineNote = "# The CAs the sources held at the last render and the previous CAs, trusted through the overlap; every render rewrites this source.\n"

// trustManagerBundle is the target Bundle as read.
type trustManagerBundle struct {
	node    *yaml.RNode
	ref     kube.Ref
	sources *yaml.RNode // the spec.sources list
	own     int         // index of rotate-certs' inLine source, -1 if none
	held    []*x509.Certificate
}

// trustManager is the trust-manager Bundle target kind.
type trustManager struct {
	*renderer
	// b is the Bundle as current read it.
	b *trustManagerBundle
}

// current reads the target Bundle: its visible sources are the bundle's
// current CAs, and what rotate-certs remembers (the seen annotation, its
// own inLine source) the previous state, which slots yields.
func (r *trustManager) current() ([]*x509.Certificate, bool) {
	b, current, ok := r.read()
	r.b = b
	return current, ok
}

// read reads the target Bundle (see current).
func (r *trustManager) read() (*trustManagerBundle, []*x509.Certificate, bool) {
	t := r.bundle.Target
	key := kube.Key{Kind: string(kube.TargetBundle), Name: t.Name}
	node := r.env.Index.GetIn(TrustManagerGroup, key)
	if node == nil {
		r.errorf(r.env.PolicyRef, r.path+".target.name", "bundle %q: trust-manager Bundle %s is not in the input; rotate-certs adds the previous CAs to an existing Bundle and never creates one (its sources are yours)",
			r.bundle.Name, t.Name)
		return nil, nil, false
	}
	b := &trustManagerBundle{node: node, ref: kube.RefOf(node), own: -1}
	if v := node.GetApiVersion(); v != trustManagerVersion {
		r.errorf(b.ref, "apiVersion", "bundle %q: %s has apiVersion %s; rotate-certs writes %s Bundles", r.bundle.Name, b.ref, kube.Quote(v), trustManagerVersion)
		return nil, nil, false
	}
	seq, err := node.Pipe(yaml.Lookup("spec", "sources"))
	if err != nil || seq == nil || seq.YNode().Kind != yaml.SequenceNode {
		r.errorf(b.ref, "spec.sources", "bundle %q: %s has no spec.sources list; trust-manager requires one", r.bundle.Name, b.ref)
		return nil, nil, false
	}
	b.sources = seq
	entries, _ := seq.Elements()
	var current []*x509.Certificate
	for i, e := range entries {
		field := fmt.Sprintf("spec.sources[%d]", i)
		if e.YNode().Kind != yaml.MappingNode {
			r.errorf(b.ref, field, "bundle %q: %s %s is a YAML %s, not a source", r.bundle.Name, b.ref, field, kube.NodeKindName(e.YNode().Kind))
			return nil, nil, false
		}
		certs, ok := r.readBundleSource(b, i, e, field)
		if !ok {
			return nil, nil, false
		}
		current = append(current, certs...)
	}
	if b.own >= 0 {
		e := entries[b.own]
		text, _, _ := scalar(e, "inLine")
		var ok bool
		if b.held, ok = r.readHeld(b.ref, fmt.Sprintf("spec.sources[%d].inLine", b.own), []byte(text)); !ok {
			return nil, nil, false
		}
	}
	if r.failed() {
		return nil, nil, false
	}
	return b, current, true
}

// readBundleSource reads source i of a Bundle: the certificates of a
// user's source, or none for rotate-certs' own inLine source (recorded in
// b) and for the default CA package (trust-manager's, which rotate-certs
// cannot see).
func (r *trustManager) readBundleSource(b *trustManagerBundle, i int, e *yaml.RNode, field string) ([]*x509.Certificate, bool) {
	if text, found, err := scalar(e, "inLine"); err != nil || found {
		if err != nil {
			r.errorf(b.ref, field+".inLine", "bundle %q: %s %s.inLine %v", r.bundle.Name, b.ref, field, err)
			return nil, false
		}
		return r.readInLine(b, i, field+".inLine", text)
	}
	for _, kind := range []string{"secret", "configMap"} {
		sel, err := mapping(e, kind)
		if err != nil {
			r.errorf(b.ref, field+"."+kind, "bundle %q: %s %s.%s %v", r.bundle.Name, b.ref, field, kind, err)
			return nil, false
		}
		if sel != nil {
			return r.readBundleObjects(b, strings.ToUpper(kind[:1])+kind[1:], sel, field+"."+kind)
		}
	}
	if kube.TrueAt(e, "useDefaultCAs") {
		r.add(b.ref.Result(framework.Info, field+".useDefaultCAs", fmt.Sprintf(
			"bundle %q: the default CA package is trust-manager's own; rotate-certs neither sees nor carries it, and trust-manager keeps it trusted", r.bundle.Name)))
	}
	return nil, true
}

// readInLine reads an inLine source. One that starts with a managed-by
// line belongs to a tool: rotate-certs' own carries the previous CAs (it
// is not current), and another tool's is an error - two writers of one
// Bundle's history would undo each other. Any other inLine is the user's,
// and current.
func (r *trustManager) readInLine(b *trustManagerBundle, i int, field, text string) ([]*x509.Certificate, bool) {
	switch owner := managedBy(text); {
	case owner == "":
		certs, ok := r.readBundlePEM(b.ref, field, []byte(text))
		return certs, ok
	case owner == ownOwner+r.bundle.Name:
		if b.own >= 0 {
			r.errorf(b.ref, field, "bundle %q: %s holds two inLine sources of rotate-certs (spec.sources[%d] and [%d]); delete one", r.bundle.Name, b.ref, b.own, i)
			return nil, false
		}
		b.own = i
		return nil, true
	case strings.HasPrefix(owner, ownOwner):
		r.errorf(b.ref, field, "bundle %q: %s is managed by rotate-certs bundle %q, not this one; one bundle keeps a Bundle's previous CAs - point only one policy bundle at it (after renaming a bundle, edit the managed-by line to the new name)",
			r.bundle.Name, field, strings.TrimPrefix(owner, ownOwner))
		return nil, false
	default:
		r.errorf(b.ref, field, "bundle %q: %s %s is managed by %q, another tool: rotate-certs keeps the previous CAs in an inLine source of its own and would fight that tool over them - remove one of the two from this Bundle",
			r.bundle.Name, b.ref, field, owner)
		return nil, false
	}
}

// managedBy returns the owner an inLine source names on its first line
// ("# managed-by: <owner>"), "" when it names none.
func managedBy(text string) string {
	first, _, _ := strings.Cut(strings.TrimLeft(text, " \t\r\n"), "\n")
	rest, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(first, "#")), "managed-by:")
	if !ok || !strings.HasPrefix(first, "#") {
		return ""
	}
	return strings.TrimSpace(rest)
}

// OwnInLineBundle returns the bundle an inLine source of rotate-certs'
// own names on its managed-by line; false for any other source.
func OwnInLineBundle(text string) (string, bool) { return strings.CutPrefix(managedBy(text), ownOwner) }

// readBundleObjects reads a secret or configMap source of a Bundle: the
// named object of the trust namespace, or every one its selector matches,
// at key or (includeAllKeys) every key that holds certificates. A named
// object that is not in the input is an error: its CAs could not be
// carried when they leave.
func (r *trustManager) readBundleObjects(b *trustManagerBundle, kind string, sel *yaml.RNode, field string) ([]*x509.Certificate, bool) {
	ns := r.bundle.Target.TrustNamespace
	name, _, _ := scalar(sel, "name")
	key, all, ok := r.sourceKeys(b, sel, field, name)
	if !ok {
		return nil, false
	}
	var objects []*yaml.RNode
	if name != "" {
		k := kube.Key{Kind: kind, Namespace: ns, Name: name}
		node := r.sourceObject(k, field)
		if node == nil {
			r.errorf(b.ref, field, "bundle %q: %s source %s %s is not in the input, so rotate-certs cannot carry its CAs once they leave it - add it%s",
				r.bundle.Name, b.ref, field, k, SnapshotHint(k))
			return nil, false
		}
		objects = []*yaml.RNode{node}
	} else {
		selector, err := certmanager.SourceSelector(sel)
		if err != nil {
			r.errorf(b.ref, field+".selector", "bundle %q: %s %s.selector: %v", r.bundle.Name, b.ref, field, err)
			return nil, false
		}
		objects = SelectSources(r.env.Index, r.env.Snapshots, kind, ns, selector)
		if len(objects) == 0 {
			r.add(b.ref.Result(framework.Warning, field+".selector", fmt.Sprintf(
				"bundle %q: %s selects no %s of namespace %s in the input; rotate-certs cannot carry CAs it never sees - snapshot the objects trust-manager selects into the package",
				r.bundle.Name, field, kind, ns)))
		}
	}
	var out []*x509.Certificate
	for _, node := range objects {
		if all && kind == string(kube.TargetSecret) && kube.ScalarAt(node, "type") == secretTypeTLS {
			r.errorf(b.ref, field+".includeAllKeys", "bundle %q: %s %s.includeAllKeys reads every key of %s, a TLS Secret, whose tls.key is a private key; trust-manager refuses includeAllKeys for TLS Secrets (the Bundle stops syncing) - read its ca.crt with key: ca.crt",
				r.bundle.Name, b.ref, field, kube.RefOf(node))
			return nil, false
		}
		certs, ok := r.readBundleObject(node, key, all)
		if !ok {
			return nil, false
		}
		out = append(out, certs...)
	}
	return out, true
}

// sourceKeys reads which keys a configMap or secret source reads: key, or
// every key (includeAllKeys). It refuses what trust-manager's webhook
// refuses - both or neither, a name beside a selector - rather than guess:
// with both, trust-manager's controller reads key alone, and reading every
// key would pin CAs it never distributes.
func (r *trustManager) sourceKeys(b *trustManagerBundle, sel *yaml.RNode, field, name string) (string, bool, bool) {
	key, _, _ := scalar(sel, "key")
	all := kube.TrueAt(sel, "includeAllKeys")
	if s, _ := mapping(sel, "selector"); s != nil && name != "" {
		r.errorf(b.ref, field+".selector", "bundle %q: %s %s sets both name and selector; trust-manager accepts exactly one - delete one", r.bundle.Name, b.ref, field)
		return "", false, false
	}
	switch {
	case key != "" && all:
		r.errorf(b.ref, field+".includeAllKeys", "bundle %q: %s %s sets both key and includeAllKeys: true; trust-manager accepts one of them - delete key to read every key, or includeAllKeys to read %s alone",
			r.bundle.Name, b.ref, field, kube.Quote(key))
		return "", false, false
	case key == "" && !all:
		r.errorf(b.ref, field+".key", "bundle %q: %s %s names no key and does not set includeAllKeys: true; trust-manager requires one of them", r.bundle.Name, b.ref, field)
		return "", false, false
	}
	return key, all, true
}

// SelectSources returns the objects of kind in namespace ns that a Bundle
// source's selector selects in the input: manifests of idx, then
// snapshots of other objects, whose labels match selector.
func SelectSources(idx *kube.Index, snapshots *Snapshots, kind, ns string, selector kube.Selector) []*yaml.RNode {
	var out []*yaml.RNode
	seen := map[kube.Key]bool{}
	for _, list := range [][]*yaml.RNode{idx.Kind(kind), snapshots.kind(kind)} {
		for _, n := range list {
			k := kube.KeyOf(n)
			if seen[k] || n.GetNamespace() != ns || n.GetApiVersion() != "v1" || !selector.Matches(n.GetLabels()) {
				continue
			}
			seen[k] = true
			out = append(out, n)
		}
	}
	return out
}

// readBundleObject reads the certificates of one source object.
func (r *trustManager) readBundleObject(node *yaml.RNode, key string, allKeys bool) ([]*x509.Certificate, bool) {
	ref := kube.RefOf(node)
	var values []kube.Value
	var err error
	if allKeys {
		values, err = kube.Values(node)
	} else {
		var v kube.Value
		var found bool
		v, found, err = kube.Lookup(node, key)
		if err == nil && !found {
			what := "has no key"
			if all, _ := kube.Values(node); len(all) == 0 {
				what = "is empty: it has no key"
			}
			r.errorf(ref, "data."+kube.Safe(key), "bundle %q: %s %s %s, which trust-manager Bundle %s reads", r.bundle.Name, ref, what, kube.Quote(key), r.bundle.Target.Name)
			return nil, false
		}
		values = []kube.Value{v}
	}
	if err != nil {
		r.errorf(ref, kube.FieldOf(err), "bundle %q: source %s: %v", r.bundle.Name, ref, err)
		return nil, false
	}
	if allKeys && len(values) == 0 {
		r.add(ref.Result(framework.Warning, "data", fmt.Sprintf("bundle %q: %s is empty; trust-manager Bundle %s reads every key of it (includeAllKeys) and finds no certificate",
			r.bundle.Name, ref, r.bundle.Target.Name)))
	}
	var out []*x509.Certificate
	for _, v := range values {
		if allKeys && !pki.LooksLikePEM(v.Bytes) {
			continue
		}
		certs, ok := r.readBundlePEM(ref, v.Field, v.Bytes)
		if !ok {
			return nil, false
		}
		out = append(out, certs...)
	}
	return out, true
}

// readBundlePEM reads one PEM value of a Bundle's source as current
// certificates. trust-manager refuses a value that holds anything but
// CERTIFICATE blocks without PEM headers (a private key, say), and stops
// syncing the whole Bundle, so rotate-certs refuses it too: it would
// otherwise pin that value's CAs, which trust-manager never distributed.
// A value with no certificate at all is an error here too, stricter than
// trust-manager (which adds nothing for it): its CAs could not be carried
// when they leave.
func (r *trustManager) readBundlePEM(ref kube.Ref, field string, data []byte) ([]*x509.Certificate, bool) {
	if len(data) > maxValueBytes {
		r.errorf(ref, field, "bundle %q: source %s %s is %s", r.bundle.Name, ref, field, tooLarge(len(data)))
		return nil, false
	}
	d, err := r.env.Certs.DecodePEM(data)
	const refused = "trust-manager refuses such a source too (only CERTIFICATE blocks without PEM headers) and stops syncing the Bundle"
	const unread = "rotate-certs cannot carry CAs it cannot read (trust-manager adds nothing for it, and fails only when the whole Bundle is empty)"
	var problem, why string
	switch {
	case err != nil:
		problem, why = "is not PEM certificate data: "+err.Error(), unread
	case len(d.SkippedTypes) > 0:
		problem, why = fmt.Sprintf("holds %d PEM block(s) that are not certificates (%s)", len(d.SkippedTypes), strings.ToLower(strings.Join(d.SkippedTypes, ", "))), refused
	case d.HeaderBlocks > 0:
		problem, why = fmt.Sprintf("holds %d CERTIFICATE block(s) with PEM headers", d.HeaderBlocks), refused
	case len(d.Certificates) == 0:
		problem, why = "holds no certificate", unread
	}
	if problem != "" {
		r.errorf(ref, field, "bundle %q: source %s %s %s; %s", r.bundle.Name, ref, field, problem, why)
		return nil, false
	}
	r.warnLeaves(ref, field, fmt.Sprintf("source %s %s", ref, field), d.Certificates)
	r.from(ref, field, d.Certificates)
	return d.Certificates, true
}

// slots yields the Bundle's rotate-certs inLine source, read by current:
// what it holds is the previous state. The pinned and the previous CAs
// are written into it (added or rewritten), and what the sources hold now
// into the seen annotation (memory.go).
func (r *trustManager) slots() iter.Seq[slot] {
	return func(yield func(slot) bool) {
		b := r.b
		s := slot{key: kube.KeyOf(b.node), ref: b.ref, node: b.node, memKey: "spec.sources", field: "spec.sources",
			previous: b.held, limit: maxValueBytes, limitWhy: "(1 MiB) rotate-certs writes into one inLine source",
			unknown: "has no inLine source of rotate-certs yet (this is the first render)", keepsSeen: true, readsSources: b.own < 0}
		if b.own >= 0 {
			s.field = fmt.Sprintf("spec.sources[%d].inLine", b.own)
		}
		yield(s)
	}
}

// write makes rotate-certs' inLine source hold the rendered bundle.
func (r *trustManager) write(_ slot, res *Target, _ []byte) (bool, bool) {
	field, changed, err := r.writeOwnInLine(r.b, res.Outcome.Certificates())
	if err != nil {
		r.errorf(r.b.ref, field, "bundle %q: %v", r.bundle.Name, err)
		return false, false
	}
	res.field = field
	return changed, true
}

// writeOwnInLine makes rotate-certs' inLine source hold exactly certs
// (the rendered bundle, in canonical order): rewritten in place, appended
// when new, removed when certs is empty. It returns the field it wrote and
// whether the Bundle changed.
func (r *trustManager) writeOwnInLine(b *trustManagerBundle, certs []*x509.Certificate) (string, bool, error) {
	seq := b.sources.YNode()
	if len(certs) == 0 {
		if b.own < 0 {
			return "spec.sources", false, nil
		}
		seq.Content = append(seq.Content[:b.own:b.own], seq.Content[b.own+1:]...)
		return "spec.sources", true, nil
	}
	text := ManagedByLine + ownOwner + r.bundle.Name + "\n" + ownInLineNote + string(pki.EncodePEM(certs))
	if b.own >= 0 {
		field := fmt.Sprintf("spec.sources[%d].inLine", b.own)
		changed, err := setString(yaml.NewRNode(seq.Content[b.own]), "inLine", text)
		return field, changed, err
	}
	if len(seq.Content) >= maxBundleSources {
		return "spec.sources", false, fmt.Errorf("%s already has %d sources, the most trust-manager accepts; rotate-certs needs one more for the previous CAs", b.ref, len(seq.Content))
	}
	entry := yaml.NewMapRNode(nil)
	v := yaml.NewStringRNode(text)
	v.YNode().Style = yaml.LiteralStyle
	if err := entry.PipeE(yaml.SetField("inLine", v)); err != nil {
		return "spec.sources", false, err
	}
	seq.Content = append(seq.Content, entry.YNode())
	return fmt.Sprintf("spec.sources[%d].inLine", len(seq.Content)-1), true, nil
}
