package restart

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Readers is the one answer to who reads a trust object, and how: the
// restart rules roll by it, render warns by it and diff counts consumers
// by it. A reader is an object of a reader row - a workload kind of
// policy.WorkloadKinds (its pod template: whole volume, subPath, env,
// envFrom, projected ClusterTrustBundles by name or by signer and label
// selector) or a kind of caRefReaders (Gateway API and Envoy Gateway
// caCertificateRefs) - that names the object, or what a trust-manager
// Bundle writes, in a namespace sameNamespace matches and with the object
// nearest it among the copies the tree holds; the API server reads a
// caBundle; a workload reads the trust its own pod template holds as a
// value (an env value), and nothing in the tree reads a Helm value
// (embedded); and, for a policy bundle's targets (OfBundle), the workloads
// its mesh or injector rules say are injected and those restart.workloads
// names. Reader.Once is the one rule for "reads it once".
//
// The items are read once, when first asked.
type Readers struct {
	items []*yaml.RNode
	opts  ReadersOptions

	scanned bool
	readers []*reader
	byNode  map[*yaml.RNode]*reader
	errors  []ReadError
	refs    map[Object][]*reference
	// providers are the copies each object of the tree provides (a
	// trust-manager Bundle provides a ConfigMap and a Secret).
	providers map[*yaml.RNode][]*provider
	// copies are the providers of each object, in input order; under the
	// same by package and directory (underOf).
	copies     map[Object][]*provider
	under      map[Object]map[string]map[string][]*provider
	signers    map[string]map[string]bool // the packages holding a ClusterTrustBundle of each signer
	namespaces map[string]map[string]*Namespace
	// places are the providers by object, namespace and file.
	places map[place]*provider
	// nearest are the copies each reference names; to the references
	// naming each copy, made per object when first asked.
	nearest  map[*reference][]*provider
	to       map[*provider][]*reference
	resolved map[Object]bool
}

// place is where a provider is: what it provides, its namespace, its file.
type place struct {
	obj      Object
	ns, file string
}

// ReadersOptions says how the items of Readers are placed.
type ReadersOptions struct {
	// Kinds is the workload-kind table; the zero value is the one
	// rotate-certs ships (policy.WorkloadKinds).
	Kinds policy.WorkloadTable
	// Package returns the package an item is in (layout.Split's
	// directory; "" for none); nil: the items are one package, what a
	// render reads.
	Package func(*yaml.RNode) string
	// File returns the file an item is in, as Subject.File names files;
	// nil: its path annotation.
	File func(*yaml.RNode) string
	// Namespace returns the namespace an item is applied in when
	// something other than its manifest decides it (a kustomization's
	// namespace:, which kustomize writes over the manifest's own), or
	// AnyNamespace when it may be several; nil or "": its manifest's,
	// unknown when it names none (namespace.go).
	Namespace func(*yaml.RNode) string
}

// Subject is a trust object whose readers are asked for.
type Subject struct {
	// Key is the object: kindSecret, kindConfigMap,
	// kindClusterTrustBundle, certmanager.KindBundle (a trust-manager
	// Bundle, whose readers read what it writes), or a kind whose caBundle
	// fields the API server reads. Its namespace is "" when the manifest
	// names none.
	Key kube.Key
	// Node is the object, nil when the caller has none: a
	// ClusterTrustBundle's signerName and labels, a trust-manager
	// Bundle's target and where the object is (file, package) are read
	// from it.
	Node *yaml.RNode
	// File is the object's file when Node is nil or not one of the items
	// (a target a render creates): with no Node, the tree's object of
	// this kind, namespace and name in File is the subject; an object the
	// tree does not hold is a copy in File's directory.
	File string
	// Field is, when Node holds the trust in a value of its own rather
	// than others reading Node (a pod template's env value, a Helm value
	// of a HelmRelease or an Argo CD Application), that value's field
	// path: its readers are Node's own (embedded).
	Field string
}

// Reader is an object that reads a trust object, and how.
type Reader struct {
	// Ref names the reader: a workload, a Gateway API object, or the
	// object whose caBundle the API server reads.
	Ref kube.Ref
	// Workload is the reader when it is a workload; nil otherwise.
	Workload *Workload
	// Uses are the ways it reads the object, in template order.
	Uses []Use
	// reads names what it reads when that is not the object itself (what
	// a trust-manager Bundle writes, ClusterTrustBundles by signer); ""
	// otherwise.
	reads string
	// Through is, for a reader of what a trust-manager Bundle writes, the
	// object it reads, in the namespace its reference names it in; zero
	// otherwise.
	Through kube.Key
	// explicit is true for a workload restart.workloads names.
	explicit bool

	order int
}

// Once reports whether the reader reads the trust once and keeps it until
// it is restarted - what the restart rules roll a workload for (decide):
// through env, envFrom, a subPath mount or injection at admission, a
// whole volume without reload: hot, or as restart.workloads names it; and
// a workload annotated reload: never, which keeps what it read (Never).
// Jobs and CronJobs do not: each new pod reads the current trust. Nor do a
// gateway's controller and the API server, which follow every update.
func (r Reader) Once() bool {
	w := r.Workload
	switch {
	case w == nil || w.role == policy.RoleReported:
		return false
	case w.reload == reloadNever:
		return true
	}
	return decide(r.Uses, w.reload, r.explicit).Roll
}

// Never reports whether nothing rolls the reader: a workload annotated
// reload: never, or of a kind the restart rules never roll (a Pod, a
// ReplicaSet). A workload reading its own env value is rolled by the
// change of that value whatever it is annotated: a changed template
// replaces the pods of a kind that replaces pods.
func (r Reader) Never() bool {
	w := r.Workload
	switch {
	case w == nil:
		return false
	case w.role == policy.RoleListed:
		return true
	}
	return w.reload == reloadNever && !slices.ContainsFunc(r.Uses, func(u Use) bool { return u.Via == ViaOwnEnv })
}

// How returns the read that says how the reader reads: the one the
// restart rules roll a workload for, else its first.
func (r Reader) How() Use {
	if r.Workload != nil {
		if d := decide(r.Uses, r.Workload.reload, r.explicit); d.Because != (Use{}) {
			return d.Because
		}
	}
	if len(r.Uses) > 0 {
		return r.Uses[0]
	}
	if r.explicit {
		return Use{Via: ViaNamed}
	}
	return Use{}
}

// ReadError is an object of a reader row whose reads are not known (a
// missing or malformed pod template: it is no reader), or a workload
// whose rotate-certs.dev/reload value is not a reload class (read with
// the default class). Render fails on it; diff reports it.
type ReadError struct {
	// Node is the object.
	Node *yaml.RNode
	// Err is a *kube.FieldError.
	Err error
	// Role is the role of its kind in the workload-kind table.
	Role policy.WorkloadRole
	// Counted is true when it is a reader nonetheless (a bad reload
	// value).
	Counted bool
}

// reader is an object of a reader row.
type reader struct {
	node     *yaml.RNode
	ref      kube.Ref
	w        *Workload // nil for a caRefReader
	order    int
	pkg, dir string
}

// reference is every use of one object by one reader.
type reference struct {
	rd   *reader
	obj  Object
	ns   string // the namespace the reference names the object in
	uses []Use
}

// provider is an object of the tree a reference may name: a Secret,
// ConfigMap or ClusterTrustBundle, or a trust-manager Bundle, which
// provides the objects it writes.
type provider struct {
	node           *yaml.RNode
	obj            Object
	ns             string
	pkg, dir, file string
	// written is the target of a trust-manager Bundle.
	written *certmanager.BundleTarget
}

// NewReaders returns the readers of items, read when first asked.
func NewReaders(items []*yaml.RNode, opts ReadersOptions) *Readers {
	return &Readers{items: items, opts: opts}
}

// Errors returns what could not be read, in input order.
func (r *Readers) Errors() []ReadError {
	r.scan()
	return r.errors
}

// workloads returns every workload read, in input order.
func (r *Readers) workloads() []*Workload {
	r.scan()
	var out []*Workload
	for _, rd := range r.readers {
		if rd.w != nil {
			out = append(out, rd.w)
		}
	}
	return out
}

// Of returns what reads trust object s, each reader once, in input
// order. The uses of a reader are those that name s.
func (r *Readers) Of(s Subject) []Reader {
	r.scan()
	if s.Field != "" {
		return r.embedded(s)
	}
	var out []Reader
	switch s.Key.Kind {
	case kindSecret, kindConfigMap:
		out = r.byReference(s, s.Key.Kind, "")
	case kindClusterTrustBundle:
		out = mergeReaders(r.byReference(s, kindClusterTrustBundle, ""), r.bySigner(s))
	case certmanager.KindBundle:
		out = r.written(s)
	default:
		ref := kube.Ref{Kind: s.Key.Kind, Namespace: s.Key.Namespace, Name: s.Key.Name, Path: s.File}
		if s.Node != nil {
			ref = kube.RefOf(s.Node)
		}
		return []Reader{{Ref: ref, Uses: []Use{{Object: Object{kind: s.Key.Kind, name: s.Key.Name}, Via: ViaAPIServer}}}}
	}
	return out
}

// embedded returns the readers of the trust s.Node holds in its own
// value s.Field. A workload whose pod template holds it reads it itself,
// once, at start (ViaOwnEnv); each workload holds its own copy, so a peer
// is no reader of it. Any other object's value - a Helm value - is read by
// what the object makes (the objects a chart renders), which the tree
// does not hold: none.
func (r *Readers) embedded(s Subject) []Reader {
	rd := r.byNode[s.Node]
	if rd == nil || rd.w == nil || rd.w.workloadRef {
		return nil
	}
	if within := rd.w.templateField; within != "" && !strings.HasPrefix(s.Field, within+".") {
		return nil
	}
	use := Use{Object: Object{kind: s.Key.Kind, name: s.Key.Name}, Via: ViaOwnEnv, Field: s.Field}
	return []Reader{{Ref: rd.ref, Workload: rd.w, Uses: []Use{use}, order: rd.order}}
}

// byReference returns the readers whose references to (kind, s's name)
// name s; reads describes what they read when it is not s itself.
func (r *Readers) byReference(s Subject, kind, reads string) []Reader {
	var out []Reader
	for _, ref := range r.referencesOf(s, Object{kind: kind, name: s.Key.Name}) {
		out = append(out, Reader{Ref: ref.rd.ref, Workload: ref.rd.w, Uses: ref.uses, order: ref.rd.order, reads: reads})
	}
	return out
}

// bySigner returns the pods that project ClusterTrustBundle s by its
// signer name with a labelSelector that selects its labels (an unset
// labelSelector selects nothing, as the API says): of its package, or of
// a package that holds no ClusterTrustBundle of the signer.
func (r *Readers) bySigner(s Subject) []Reader {
	if s.Node == nil {
		return nil
	}
	signer := kube.ScalarAt(s.Node, "spec", "signerName")
	if signer == "" {
		return nil
	}
	labels, pkg := s.Node.GetLabels(), r.packageOf(s.Node)
	var out []Reader
	for _, ref := range r.refs[Object{kind: kindSigner, name: signer}] {
		if ref.rd.pkg != pkg && ref.rd.pkg != "" && pkg != "" && r.signers[signer][ref.rd.pkg] {
			continue
		}
		var uses []Use
		for _, u := range ref.uses {
			if u.selector != nil && u.selector.Matches(labels) {
				uses = append(uses, u)
			}
		}
		if len(uses) > 0 {
			out = append(out, Reader{Ref: ref.rd.ref, Workload: ref.rd.w, Uses: uses, order: ref.rd.order,
				reads: fmt.Sprintf("%s (by signer name %s)", s.Key, kube.Safe(signer))})
		}
	}
	return out
}

// written returns the readers of what trust-manager Bundle s writes: an
// object of its name, of each kind of its target, in each namespace its
// namespaceSelector selects. They read it through that object.
func (r *Readers) written(s Subject) []Reader {
	if s.Node == nil {
		return nil
	}
	tt, ok := certmanager.ReadBundleTarget(s.Node)
	if !ok {
		return nil
	}
	var out []Reader
	for _, kind := range tt.Kinds() {
		for _, ref := range r.referencesOf(s, Object{kind: kind, name: tt.Name}) {
			through := kube.Key{Kind: kind, Namespace: ref.ns, Name: tt.Name}
			out = append(out, Reader{Ref: ref.rd.ref, Workload: ref.rd.w, Uses: ref.uses, order: ref.rd.order, Through: through,
				reads: fmt.Sprintf("%s written by trust-manager Bundle %s", through, tt.Name)})
		}
	}
	return mergeReaders(out)
}

// selects reports whether the namespaceSelector of t selects namespace
// ns, whose labels include the name label the API server sets (namespace
// reads them so). A namespace the tree lacks is selected only when its
// name alone decides; an unknown namespace may be any (sameNamespace).
func (r *Readers) selects(t certmanager.BundleTarget, ns, pkg string) bool {
	if t.Selector == nil || ns == "" {
		return true
	}
	if n := r.namespace(pkg, ns); n != nil {
		return t.Selects(n.Labels)
	}
	return t.Selector.Only(kube.NamespaceNameLabel) && t.Selects(kube.NamespaceLabels(ns, nil))
}

// referencesOf returns the references to obj that name s - s is among
// the copies nearest the reader (namespace.go) - in input order. A
// subject the tree holds (its node, or the tree's object of its kind and
// name at its namespace and file) is looked up; one it does not hold is a
// copy where its file is, among the tree's.
func (r *Readers) referencesOf(s Subject, obj Object) []*reference {
	p := r.places[place{obj: obj, ns: s.Key.Namespace, file: s.File}]
	if s.Node != nil {
		p = nil
		for _, q := range r.providers[s.Node] {
			if q.obj == obj {
				p = q
			}
		}
	}
	if p != nil {
		return r.referencesTo(p)
	}
	extra := &provider{node: s.Node, obj: obj, ns: s.Key.Namespace, dir: path.Dir(s.File)}
	if s.Node != nil {
		extra.pkg, extra.dir = r.packageOf(s.Node), path.Dir(r.fileOf(s.Node))
		if tt, ok := certmanager.ReadBundleTarget(s.Node); ok && s.Key.Kind == certmanager.KindBundle {
			extra.written = &tt
		}
	}
	var out []*reference
	for _, ref := range r.refs[obj] {
		if slices.Contains(r.nearestOf(ref, extra), extra) {
			out = append(out, ref)
		}
	}
	return out
}

// referencesTo returns the references that name copy p, resolving every
// reference to p's object once.
func (r *Readers) referencesTo(p *provider) []*reference {
	if !r.resolved[p.obj] {
		r.resolved[p.obj] = true
		for _, ref := range r.refs[p.obj] {
			for _, q := range r.nearestOf(ref, nil) {
				r.to[q] = append(r.to[q], ref)
			}
		}
	}
	return r.to[p]
}

// nearestOf returns the copies reference ref names: of those that
// provide its object in its namespace, the nearest ones (namespace.go),
// extra (a subject the tree does not hold) counted among them.
func (r *Readers) nearestOf(ref *reference, extra *provider) []*provider {
	if extra == nil {
		if out, ok := r.nearest[ref]; ok {
			return out
		}
	}
	var out []*provider
	passes := []string{""}
	if ref.rd.pkg != "" {
		passes = []string{ref.rd.pkg, ""}
	}
	for _, pkg := range passes {
		if out = r.nearestIn(ref, extra, pkg); len(out) > 0 {
			break
		}
	}
	if extra == nil {
		r.nearest[ref] = out
	}
	return out
}

// nearestIn walks up from ref's directory to the first directory holding
// a copy of package pkg ("" any) that ref names, and returns those.
func (r *Readers) nearestIn(ref *reference, extra *provider, pkg string) []*provider {
	byDir := r.underOf(ref.obj)[pkg]
	// A subject the tree does not hold has no package it is known by: it
	// is a copy of every package.
	useExtra := extra != nil && (pkg == "" || extra.pkg == pkg || extra.node == nil) && r.provides(extra, ref)
	for d := range ancestors(ref.rd.dir) {
		var out []*provider
		for _, p := range byDir[d] {
			if r.provides(p, ref) {
				out = append(out, p)
			}
		}
		if useExtra && within(extra.dir, d) {
			out = append(out, extra)
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// provides reports whether p may be the object ref names: in its
// namespace (sameNamespace; a ClusterTrustBundle has none), or written
// there by a trust-manager Bundle.
func (r *Readers) provides(p *provider, ref *reference) bool {
	switch {
	case p.written != nil:
		return r.selects(*p.written, ref.ns, ref.rd.pkg)
	case ref.obj.kind == kindClusterTrustBundle:
		return true
	}
	return sameNamespace(p.ns, ref.ns)
}

// mergeReaders merges lists of readers into one reader per object, in
// input order: the uses of each (once per way and field), explicit when
// any is, and the first description of what it reads.
func mergeReaders(lists ...[]Reader) []Reader {
	var out []Reader
	at := map[int]int{}
	for _, list := range lists {
		for _, rd := range list {
			i, ok := at[rd.order]
			if !ok {
				at[rd.order] = len(out)
				out = append(out, rd)
				continue
			}
			have := &out[i]
			have.explicit = have.explicit || rd.explicit
			for _, u := range rd.Uses {
				if !slices.ContainsFunc(have.Uses, func(h Use) bool { return h.Via == u.Via && h.Field == u.Field }) {
					have.Uses = append(have.Uses, u)
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Reader) int { return cmp.Compare(a.order, b.order) })
	return out
}

// sortedObjects returns the keys of byObject in a fixed order.
func sortedObjects(byObject map[Object][]Use) []Object {
	out := slices.AppendSeq(make([]Object, 0, len(byObject)), maps.Keys(byObject))
	slices.SortFunc(out, func(a, b Object) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.name, b.name))
	})
	return out
}
