package restart

import (
	"path"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// scan reads the items once: each object of a reader row (a workload of
// the workload-kind table, a kind of caRefReaders) into its references,
// each object a reference may name into the copies it provides, and the
// Namespaces by package. Local-config objects are never applied: they
// neither read nor are read.
func (r *Readers) scan() {
	if r.scanned {
		return
	}
	r.scanned = true
	r.refs, r.providers = map[Object][]*reference{}, map[*yaml.RNode][]*provider{}
	r.under, r.signers = map[Object]map[string]map[string][]*provider{}, map[string]map[string]bool{}
	r.namespaces, r.nearest = map[string]map[string]*Namespace{}, map[*reference][]*provider{}
	r.places, r.to, r.resolved = map[place]*provider{}, map[*provider][]*reference{}, map[Object]bool{}
	r.copies, r.byNode = map[Object][]*provider{}, map[*yaml.RNode]*reader{}
	var later []*yaml.RNode // the objects that may be read, once every reference is known
	for _, item := range r.items {
		if kube.IsLocalConfig(item) {
			continue
		}
		if kind, ok := r.opts.Kinds.At(item.GetApiVersion(), item.GetKind()); ok {
			w, err := readWorkload(item, kind)
			if err != nil {
				r.errors = append(r.errors, ReadError{Node: item, Err: err, Role: kind.Role, Counted: w != nil})
			}
			if w != nil {
				r.addWorkload(item, w)
			}
			continue
		}
		if c, ok := caRefReaderOf(item); ok {
			r.addCARefs(item, c)
			continue
		}
		later = append(later, item)
	}
	for _, item := range later {
		r.addProvider(item)
	}
}

// newReader records item as a reader.
func (r *Readers) newReader(item *yaml.RNode, w *Workload) *reader {
	rd := &reader{node: item, w: w, order: len(r.readers), pkg: r.packageOf(item), dir: path.Dir(r.fileOf(item))}
	if w != nil {
		rd.ref = w.ref
	} else {
		rd.ref = kube.RefOf(item)
	}
	if ns := namespaceOf(item, r.opts.Namespace); ns != rd.ref.Namespace {
		rd.ref.Namespace = ns
		if w != nil {
			w.ref.Namespace, w.pod.Namespace = ns, ns
		}
	}
	r.readers = append(r.readers, rd)
	r.byNode[item] = rd
	return rd
}

// addWorkload records the references of workload w (item): one per
// object its pod template names, in the workload's namespace.
func (r *Readers) addWorkload(item *yaml.RNode, w *Workload) {
	rd := r.newReader(item, w)
	if w.workloadRef {
		return
	}
	byObject := groupByObject(w.Model.uses())
	for _, o := range sortedObjects(byObject) {
		r.refs[o] = append(r.refs[o], &reference{rd: rd, obj: o, ns: rd.ref.Namespace, uses: byObject[o]})
	}
}

// addCARefs records the caCertificateRefs of item, a kind of c: one
// reference per object and namespace it names.
func (r *Readers) addCARefs(item *yaml.RNode, c caRefReader) {
	rd := r.newReader(item, nil)
	at := map[caRef]*reference{}
	for _, cr := range c.refs(item) {
		if cr.namespace == "" && cr.object.kind != kindClusterTrustBundle {
			cr.namespace = rd.ref.Namespace
		}
		use := Use{Object: cr.object, Via: ViaCARef, Field: cr.field}
		cr.field = ""
		if ref, ok := at[cr]; ok {
			ref.uses = append(ref.uses, use)
			continue
		}
		ref := &reference{rd: rd, obj: cr.object, ns: cr.namespace, uses: []Use{use}}
		at[cr] = ref
		r.refs[cr.object] = append(r.refs[cr.object], ref)
	}
}

// addProvider records item when a reference names it: a Secret, a
// ConfigMap, a ClusterTrustBundle, or a trust-manager Bundle (what it
// writes) - one nothing names has no readers, and is not indexed - and a
// Namespace, whose labels and annotations the namespaceSelectors and
// injection rules read.
func (r *Readers) addProvider(item *yaml.RNode) {
	apiVersion, kind := item.GetApiVersion(), item.GetKind()
	group := kube.GroupOf(apiVersion)
	core := group == "" && apiVersion == "v1"
	copyOf := func(obj Object) provider {
		file := r.fileOf(item)
		return provider{node: item, obj: obj, ns: namespaceOf(item, r.opts.Namespace), pkg: r.packageOf(item), dir: path.Dir(file), file: file}
	}
	switch {
	case core && (kind == kindSecret || kind == kindConfigMap):
		if obj := (Object{kind: kind, name: item.GetName()}); len(r.refs[obj]) > 0 {
			r.provide(copyOf(obj))
		}
	case group == groupCertificates && kind == kindClusterTrustBundle:
		p := copyOf(Object{kind: kind, name: item.GetName()})
		r.provide(p)
		if signer := kube.ScalarAt(item, "spec", "signerName"); signer != "" {
			if r.signers[signer] == nil {
				r.signers[signer] = map[string]bool{}
			}
			r.signers[signer][p.pkg] = true
		}
	case certmanager.IsBundle(item):
		tt, ok := certmanager.ReadBundleTarget(item)
		if !ok {
			return
		}
		for _, k := range tt.Kinds() {
			p := copyOf(Object{kind: k, name: tt.Name})
			p.written = &tt
			r.provide(p)
		}
	case core && kind == "Namespace":
		r.addNamespace(item)
	}
}

// addNamespace records Namespace item, by package and for any package.
func (r *Readers) addNamespace(item *yaml.RNode) {
	n := &Namespace{Labels: kube.NamespaceLabels(item.GetName(), item.GetLabels()), Annotations: item.GetAnnotations()}
	for _, in := range []string{r.packageOf(item), anyPackage} {
		if r.namespaces[in] == nil {
			r.namespaces[in] = map[string]*Namespace{}
		}
		if _, dup := r.namespaces[in][item.GetName()]; !dup {
			r.namespaces[in][item.GetName()] = n
		}
	}
}

// provide records p, the copy of an object an item provides.
func (r *Readers) provide(p provider) {
	pp := &p
	r.providers[p.node] = append(r.providers[p.node], pp)
	r.copies[p.obj] = append(r.copies[p.obj], pp)
	if at := (place{obj: p.obj, ns: p.ns, file: p.file}); r.places[at] == nil {
		r.places[at] = pp
	}
}

// underOf returns the copies of obj by package ("" for all) and by every
// directory they are in or below, indexed when a reference to obj is
// first resolved: the copies nothing names cost nothing.
func (r *Readers) underOf(obj Object) map[string]map[string][]*provider {
	if byPkg, ok := r.under[obj]; ok {
		return byPkg
	}
	byPkg := map[string]map[string][]*provider{}
	for _, p := range r.copies[obj] {
		pkgs := []string{""}
		if p.pkg != "" {
			pkgs = append(pkgs, p.pkg)
		}
		for _, pkg := range pkgs {
			if byPkg[pkg] == nil {
				byPkg[pkg] = map[string][]*provider{}
			}
			for d := range ancestors(p.dir) {
				byPkg[pkg][d] = append(byPkg[pkg][d], p)
			}
		}
	}
	r.under[obj] = byPkg
	return byPkg
}

// anyPackage indexes the first Namespace of each name of the tree,
// whatever its package (a package directory is never this string).
const anyPackage = "\x00any"

// namespace returns the Namespace object named ns of package pkg, else
// the first of the tree, nil when the tree has none. Its labels are those
// a namespaceSelector sees: the manifest's and the name label the API
// server sets (kube.NamespaceLabels).
func (r *Readers) namespace(pkg, ns string) *Namespace {
	r.scan()
	if n := r.namespaces[pkg][ns]; n != nil {
		return n
	}
	return r.namespaces[anyPackage][ns]
}

// packageOf returns the package of item; "" for none, or when the items
// are one package.
func (r *Readers) packageOf(item *yaml.RNode) string {
	if r.opts.Package == nil || item == nil {
		return ""
	}
	return r.opts.Package(item)
}

// fileOf returns the file of item.
func (r *Readers) fileOf(item *yaml.RNode) string {
	if r.opts.File != nil {
		return r.opts.File(item)
	}
	file, _ := kube.FileOf(item)
	return file
}
