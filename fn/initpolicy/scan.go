// Package initpolicy writes a starter RotationPolicy from the manifests a
// user already has: every Secret or ConfigMap that holds a CA certificate
// becomes the source of a trust bundle, a target name is proposed next to
// it, and the workloads that read the source today are listed as comments,
// so that a new user gets from zero to a first render in one command.
//
// It only reads resources; the plan it makes is plain data and the YAML it
// writes always decodes as a valid policy. Which workloads read a source is
// package restart's reading of pod templates, so that init and a render
// agree on who consumes a bundle.
package initpolicy

import (
	"crypto/x509"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
)

// Candidate is one data value that holds CA certificates.
type Candidate struct {
	// Ref is the Secret or ConfigMap.
	Ref kube.Ref
	// Key is the data key holding the CAs.
	Key string
	// cas are the CA certificates in the value, in order.
	cas []*x509.Certificate
	// issuer is true when the object is the CA's own key pair (its tls.crt
	// is one of the CAs), the best place to read a CA from.
	issuer bool
	// leafCopy is true when the object also holds a leaf (a tls.crt that
	// is not a CA): its CA value is the copy of the CA that issued the
	// leaf, as it was when the leaf was issued - a CA source only when no
	// better one holds a newer CA of that line.
	leafCopy bool
	// node is the object.
	node *yaml.RNode
}

// Reader is what reads a source object (restart.Readers): a workload,
// through its pod template, or a Gateway API or Envoy Gateway object,
// through its caCertificateRefs.
type Reader struct {
	// Ref is the reader.
	Ref kube.Ref
	// how lists the references, such as "volume ca", "env CA_CERT" or
	// "caCertificateRefs spec.tls.caCertificateRefs[0]".
	how []string
	// Via is the object read when it is not the bundle's source but a copy
	// of the same CAs (Bundle.Also); empty otherwise.
	Via string
}

// String returns "Kind namespace/name (how, ...)" and, for a reader of a
// copy, which copy.
func (c Reader) String() string {
	s := c.Ref.String() + " (" + strings.Join(c.how, ", ") + ")"
	if c.Via != "" {
		s += " via " + c.Via
	}
	return s
}

// Source is one source of a proposed bundle.
type Source struct {
	// Candidate is the value the bundle reads.
	Candidate
	// Also lists other values holding exactly the same CAs (leaf Secrets
	// that carry their issuer in ca.crt, copies).
	Also []Candidate
}

// Bundle is one proposed trust bundle.
type Bundle struct {
	// Name is the bundle name, unique in the plan.
	Name string
	// Sources are where the CAs are read from: one, unless a policy in the
	// input already gathers several into this bundle's target.
	Sources []Source
	// TargetKind, TargetName and TargetNamespace name the proposed target.
	TargetKind, TargetName, TargetNamespace string
	// TargetKey is the target's data key; empty means the kind's default.
	TargetKey string
	// targetExists is true when the target is already in the input; its
	// CAs become the bundle's previous CAs.
	targetExists bool
	// SourceReaders read a source today (or one of its Also copies).
	SourceReaders []Reader
	// targetReaders read the target already (a target the input wires).
	targetReaders []Reader
	// OtherNamespaces are the target's namespaces after TargetNamespace,
	// when it is already in several (a mesh trust object).
	OtherNamespaces []string
	// trustNamespace is, for a trust-manager Bundle target, the namespace
	// its sources are read from when it is not trust-manager's default.
	trustNamespace string
	// wired says why the target is one the input already wires (a
	// trust-manager Bundle reading the source, a mesh trust object); empty
	// for a target init names itself.
	wired string
	// Mesh is the restart.mesh preset proposed (the target is what that
	// mesh's workloads trust); MeshNamespaces are the Namespaces of the
	// input it injects, each with the rule that says so.
	Mesh           string
	MeshNamespaces []string
	// Domain is the trust domain proposed (ProposeTree: a CA of its sources
	// is a source in another package too), or the one a policy of the
	// input gives the bundle; domainPackages are the package directories
	// of the domain's bundles, when ProposeTree proposed it.
	Domain         string
	domainPackages []string
}

// Proposal is what init found, and the bundles it proposes.
type Proposal struct {
	// Bundles are the proposed trust bundles, in input order.
	Bundles []Bundle
	// Notes are things the user should know (skipped objects), one line
	// each.
	Notes []string
	// ControlPlanes are Cluster API control planes found (their
	// certificates expire after a year; a clusterAPI section can roll
	// them).
	ControlPlanes []kube.Ref
	// Function, when set, is the value of the policy's
	// config.kubernetes.io/function annotation: how kustomize starts the
	// function ("exec:\n  path: ...\n").
	Function string
}

// preferredKeys are tried first, in order, when an object holds CAs under
// several keys.
var preferredKeys = []string{"ca.crt", "ca-bundle.crt", "ca.pem", "tls.crt"}

// snapshotsLast returns the items init reads, in input order, then the
// local-config Secrets and ConfigMaps: snapshots of objects that live in
// the cluster (rotate-certs snapshot), which are sources like any other,
// but a manifest holding the same CA is the better one to propose. Other
// local config (a Kptfile, a function config) is left out.
func snapshotsLast(items []*yaml.RNode) []*yaml.RNode {
	var out, snapshots []*yaml.RNode
	for _, it := range items {
		switch core := (it.GetKind() == "Secret" || it.GetKind() == "ConfigMap") && it.GetApiVersion() == "v1"; {
		case !kube.IsLocalConfig(it):
			out = append(out, it)
		case core:
			snapshots = append(snapshots, it)
		}
	}
	return append(out, snapshots...)
}

// Propose plans trust bundles for items as of now. A CA that has expired by now
// is not proposed: a bundle whose every CA has expired fails to render.
// The objects are placed in the namespaces their manifests name.
func Propose(items []*yaml.RNode, now time.Time) (*Proposal, error) {
	return scanIn(items, nil, now)
}

// scanIn is Propose with the namespaces a kustomization gives objects
// (namespace: Namespaces; nil for none).
func scanIn(items []*yaml.RNode, namespace func(*yaml.RNode) string, now time.Time) (*Proposal, error) {
	sc := &scan{
		plan:      &Proposal{},
		now:       now,
		policies:  knownPolicies(items),
		taken:     map[kube.Key]bool{},
		targetCAs: carriedCAs{},
	}
	cands, err := sc.candidates(items)
	if err != nil {
		return nil, err
	}
	kept, existing := sc.adoptHandKeptBundles(cands)
	w := inPlace{bundles: trustManagerBundles(items)}
	kept, w.meshes = sc.findMeshTargets(items, kept, w.bundles)
	consumers, notes := newReaders(items, policy.WorkloadKinds(), namespace)
	sc.plan.Notes = append(sc.plan.Notes, notes...)
	sc.planBundles(kept, existing, consumers, w)
	sc.noteIstiodRootCerts(items)
	sc.proposeMeshRestarts(meshNamespaces(items))
	return sc.plan, nil
}

// scan is the state of one Propose.
type scan struct {
	plan     *Proposal
	now      time.Time
	policies known
	// taken holds every object of the input, and each target planned.
	taken map[kube.Key]bool
	// targetCAs are the CAs the existing targets hold, with the sources of
	// the bundles that write them: a leaf Secret's copy of one of them is
	// an older root another source's bundle carries, not a new source.
	targetCAs carriedCAs
	// istiodRootCerts are the namespaces of the input's istio-ca-root-cert
	// ConfigMaps: istiod writes them, so they are neither source nor target.
	istiodRootCerts []string
}

// ownersOf returns the sources of the known bundles that write target.
func (sc *scan) ownersOf(target kube.Key) []kube.Key {
	var owners []kube.Key
	for src, t := range sc.policies.sources {
		if t.Key == target {
			owners = append(owners, src)
		}
	}
	return owners
}

// addTargetCAs records the CAs an existing target holds.
func (sc *scan) addTargetCAs(it *yaml.RNode) {
	if c, found, err := candidateOf(it, sc.now); err == nil && found == candidateFound {
		sc.targetCAs.add(c.cas, sc.ownersOf(kube.KeyOf(it)))
	}
}

// candidates reads every Secret and ConfigMap that could be a source,
// noting the Cluster API control planes and why an object is not a
// source (SOPS-encrypted, a target already, written by istiod, only expired
// CAs).
func (sc *scan) candidates(items []*yaml.RNode) ([]Candidate, error) {
	var cands []Candidate
	plan := sc.plan
	for _, it := range snapshotsLast(items) {
		k := kube.KeyOf(it)
		sc.taken[k] = true
		switch it.GetKind() {
		case "KubeadmControlPlane", "KubeadmControlPlaneTemplate", "EtcdadmCluster":
			plan.ControlPlanes = append(plan.ControlPlanes, kube.RefOf(it))
			continue
		case "Secret", "ConfigMap":
		default:
			continue
		}
		ref := kube.RefOf(it)
		if kube.IsSOPSEncrypted(it) {
			plan.Notes = append(plan.Notes, fmt.Sprintf("%s is SOPS-encrypted: decrypt it to let init see its CAs", ref))
			continue
		}
		if by, ok := sc.policies.targets[k]; ok {
			plan.Notes = append(plan.Notes, fmt.Sprintf("%s is the target of %s: not a source", ref, by))
			sc.addTargetCAs(it)
			continue
		}
		if _, ok := it.GetAnnotations(trustbundle.HashAnnotation)[trustbundle.HashAnnotation]; ok {
			plan.Notes = append(plan.Notes, fmt.Sprintf("%s is already a rotate-certs target (%s): not a source", ref, trustbundle.HashAnnotation))
			sc.addTargetCAs(it)
			continue
		}
		if istiodWrites(it) {
			sc.istiodRootCerts = append(sc.istiodRootCerts, it.GetNamespace())
			continue
		}
		c, found, err := candidateOf(it, sc.now)
		if err != nil {
			return nil, err
		}
		switch found {
		case candidateFound:
			cands = append(cands, c)
		case onlyExpired:
			plan.Notes = append(plan.Notes, fmt.Sprintf("%s holds only CA certificates that have expired: not proposed as a source", ref))
		}
	}
	return cands, nil
}

// adoptHandKeptBundles finds the objects named like the target init would
// propose for a source ("<source>-trust"): that source's trust bundle,
// kept by hand until now. It becomes the target (its CAs are carried over
// as previous ones) rather than a source of its own. It returns the other
// candidates, and the targets so adopted.
func (sc *scan) adoptHandKeptBundles(cands []Candidate) (kept []Candidate, existing map[kube.Key]bool) {
	existing = map[kube.Key]bool{}
	for _, c := range cands {
		if tk := naturalTarget(c.Ref); sc.taken[tk] && tk != keyOf(c.Ref) {
			existing[tk] = true
		}
	}
	kept = cands[:0]
	for _, c := range cands {
		if existing[keyOf(c.Ref)] {
			sc.plan.Notes = append(sc.plan.Notes, fmt.Sprintf("%s looks like the existing trust bundle of %s %s/%s: proposed as its target, not as a source",
				c.Ref, c.Ref.Kind, c.Ref.Namespace, strings.TrimSuffix(c.Ref.Name, "-trust")))
			source := keyOf(c.Ref)
			source.Name = strings.TrimSuffix(source.Name, "-trust")
			sc.targetCAs.add(c.cas, []kube.Key{source})
			continue
		}
		kept = append(kept, c)
	}
	return kept, existing
}

// planBundles proposes a bundle per source: the target a policy in the
// input already gives it, what the input already wires (w), a hand-kept
// bundle adopted, or a new name; with the workloads that read the source
// today. Sources with one target share its bundle.
func (sc *scan) planBundles(kept []Candidate, existing map[kube.Key]bool, consumers readers, w inPlace) {
	plan := sc.plan
	names := map[string]bool{}
	byTarget := map[kube.Key]int{} // bundles of targets the input has, to gather their sources
	sources := group(kept)
	for _, src := range sources {
		if note := olderRoot(src, sources, sc.targetCAs); note != "" {
			plan.Notes = append(plan.Notes, note)
			continue
		}
		b := Bundle{SourceReaders: consumersOf(src, consumers)}
		tk, shared := sc.target(&b, src, existing, consumers, w)
		if shared {
			if i, seen := byTarget[tk]; seen {
				plan.Bundles[i].Sources = append(plan.Bundles[i].Sources, src)
				plan.Bundles[i].SourceReaders = append(plan.Bundles[i].SourceReaders, b.SourceReaders...)
				continue // its target's readers are listed once
			}
			byTarget[tk] = len(plan.Bundles)
		}
		sc.taken[kube.Key{Kind: b.TargetKind, Namespace: b.TargetNamespace, Name: b.TargetName}] = true
		switch {
		case b.Name != "": // the name a render of the target already used
			names[b.Name] = true
		case b.wired != "":
			b.Name = uniqueName(bundleName(kube.Ref{Name: b.TargetName}), b.TargetNamespace, names)
		default:
			b.Name = uniqueName(bundleName(src.Ref), src.Ref.Namespace, names)
		}
		b.Sources = []Source{src}
		plan.Bundles = append(plan.Bundles, b)
	}
}

// target sets b's target for src: the one a policy in the input already
// gives it, what the input already wires (w), a hand-kept bundle adopted,
// or a new name beside the source. shared is true when the target is one
// the input has, which other sources may share (tk names it).
func (sc *scan) target(b *Bundle, src Source, existing map[kube.Key]bool, consumers readers, w inPlace) (tk kube.Key, shared bool) {
	b.TargetKind, b.TargetNamespace = src.Ref.Kind, src.Ref.Namespace
	// Keep the key consumers already read, so switching them to the
	// target changes only the object name; a CA key pair's tls.crt
	// becomes the target kind's default key.
	if src.Key != "tls.crt" {
		b.TargetKey = src.Key
	}
	if t, ok := sc.policies.sources[keyOf(src.Ref)]; ok {
		b.TargetKind, b.TargetNamespace, b.TargetName, b.TargetKey = t.Kind, t.Namespace, t.Name, t.dataKey
		b.Domain = t.domain
		b.targetExists = sc.taken[t.Key]
		return t.Key, true
	}
	if tk, ok := sc.targetInPlace(w, b, src, consumers); ok {
		return tk, true
	}
	if tk := naturalTarget(src.Ref); existing[tk] {
		b.TargetName, b.targetExists = tk.Name, true
		delete(existing, tk) // one bundle per target
		return tk, false
	}
	// "<source>-trust", or "<source>-trust-2", ... when that object exists.
	b.TargetName = firstFree(func(name string) bool {
		return sc.taken[kube.Key{Kind: b.TargetKind, Namespace: b.TargetNamespace, Name: name}]
	}, src.Ref.Name+"-trust")
	return kube.Key{}, false
}

// known is what the RotationPolicies already in the input say.
type known struct {
	// targets maps each target object to the bundle that writes it.
	targets map[kube.Key]string
	// sources maps each source object to its bundle's target object
	// (in the source's namespace when the bundle writes there).
	sources map[kube.Key]target
	// bundles maps each trust-manager Bundle a bundle targets to that
	// bundle's name.
	bundles map[string]string
}

// target is a target object, its data key and the trust domain of the
// bundle that writes it.
type target struct {
	kube.Key
	dataKey, domain string
}

// knownPolicies reads every RotationPolicy in the input; one that does not
// decode is ignored (the render reports it).
func knownPolicies(items []*yaml.RNode) known {
	k := known{targets: map[kube.Key]string{}, sources: map[kube.Key]target{}, bundles: map[string]string{}}
	for _, it := range items {
		if !layout.IsPolicy(it) {
			continue
		}
		p, err := policy.Decode(it)
		if err != nil {
			continue
		}
		for _, b := range p.Spec.TrustBundles {
			if b.Target.Kind == kube.TargetBundle {
				k.bundles[b.Target.Name] = b.Name
			}
			if len(b.Target.Namespaces) == 0 {
				continue
			}
			for _, ns := range b.Target.Namespaces {
				tk := kube.Key{Kind: string(b.Target.Kind), Namespace: ns, Name: b.Target.Name}
				k.targets[tk] = fmt.Sprintf("bundle %q of RotationPolicy %s", b.Name, p.Name())
			}
			for _, s := range b.Sources {
				ref := s.Ref()
				if ref == nil {
					continue
				}
				tk := kube.Key{Kind: string(b.Target.Kind), Namespace: b.Target.Namespaces[0], Name: b.Target.Name}
				for _, ns := range b.Target.Namespaces {
					if ns == ref.Namespace {
						tk.Namespace = ns
					}
				}
				sk := kube.Key{Kind: s.Kind(), Namespace: ref.Namespace, Name: ref.Name}
				if _, dup := k.sources[sk]; !dup {
					k.sources[sk] = target{tk, b.Target.Key, b.Domain}
				}
			}
		}
	}
	return k
}

func keyOf(r kube.Ref) kube.Key { return kube.Key{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name} }

// naturalTarget is the target init proposes first for a source.
func naturalTarget(r kube.Ref) kube.Key {
	return kube.Key{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name + "-trust"}
}

// candidateResult says what candidateOf found in an object.
type candidateResult int

const (
	noCandidate    candidateResult = iota // no value holds a CA certificate
	candidateFound                        // a value holds a CA that is valid now
	onlyExpired                           // values hold CAs, all of them expired
)

// candidateOf returns the value of it that holds CA certificates valid at
// now, by preferred key and then field order.
func candidateOf(it *yaml.RNode, now time.Time) (Candidate, candidateResult, error) {
	values, err := kube.Values(it)
	if err != nil {
		return Candidate{}, noCandidate, err
	}
	rank := func(key string) int {
		if i := slices.Index(preferredKeys, key); i >= 0 {
			return i
		}
		return len(preferredKeys)
	}
	sort.SliceStable(values, func(i, j int) bool { return rank(values[i].Key) < rank(values[j].Key) })
	var best Candidate
	found, sawExpired, holdsLeaf := false, false, false
	var tlsCAs []*x509.Certificate
	for _, v := range values {
		if !pki.LooksLikePEM(v.Bytes) {
			continue
		}
		dec, err := pki.DecodePEM(v.Bytes)
		if err != nil {
			continue // not init's business: the render reports broken sources
		}
		if len(dec.Certificates) > 0 && !pki.IsCA(dec.Certificates[0]) {
			holdsLeaf = true
			continue // a leaf with its chain: the intermediates are not trust anchors
		}
		var cas []*x509.Certificate
		for _, c := range dec.Certificates {
			switch {
			case !pki.IsCA(c):
			case now.After(c.NotAfter):
				sawExpired = true
			default:
				cas = append(cas, c)
			}
		}
		if v.Key == "tls.crt" {
			tlsCAs = cas
		}
		if len(cas) > 0 && !found {
			best = Candidate{Ref: kube.RefOf(it), Key: v.Key, cas: cas, node: it}
			found = true
		}
	}
	if found && len(tlsCAs) > 0 {
		set := pki.NewSet(best.cas...)
		for _, c := range tlsCAs {
			if set.Has(c) {
				best.issuer = true
			}
		}
	}
	best.leafCopy = holdsLeaf && !best.issuer
	switch {
	case found:
		return best, candidateFound, nil
	case sawExpired:
		return Candidate{}, onlyExpired, nil
	}
	return Candidate{}, noCandidate, nil
}

// group makes one source per distinct set of CAs. It reads the CA's own
// key pair Secret when there is one, else the first value found; the other
// values with the same CAs are listed in Also.
func group(cands []Candidate) []Source {
	var out []Source
	index := map[string]int{}
	for _, c := range cands {
		fps := make([]string, 0, len(c.cas))
		for _, ca := range c.cas {
			fps = append(fps, pki.FingerprintOf(ca).String())
		}
		sort.Strings(fps)
		id := strings.Join(fps, ",")
		i, ok := index[id]
		if !ok {
			index[id] = len(out)
			out = append(out, Source{Candidate: c})
			continue
		}
		s := &out[i]
		if c.issuer && !s.issuer || !c.leafCopy && s.leafCopy {
			s.Also = append(s.Also, s.Candidate)
			s.Candidate = c
			continue
		}
		s.Also = append(s.Also, c)
	}
	return out
}

// olderRoot says why src is not proposed when it is only leaf Secrets'
// copies of their issuer (ca.crt beside a leaf tls.crt) holding an older
// root: one that an existing trust bundle already carries (it becomes a
// previous CA there), or one whose every CA has a newer CA of the same
// subject in another source (a rotated CA keeps its name). Such a copy is
// what the leaf was issued from, not what must be trusted next: proposing
// it would make a bundle that pins the old root. It returns "" when src
// is a source.
func olderRoot(src Source, all []Source, targetCAs carriedCAs) string {
	if !src.leafCopy {
		return ""
	}
	for _, a := range src.Also {
		if !a.leafCopy {
			return ""
		}
	}
	what := fmt.Sprintf("%s holds a leaf and, in %s, the CA that issued it (%s)", src.Ref, src.Key, describeCAs(src.cas))
	if targetCAs.carry(src) {
		return what + ": an older root that an existing trust bundle already carries as a previous CA - not proposed as a source; re-issue the leaf from the current CA"
	}
	var newer []string
	for _, ca := range src.cas {
		by := newerOfSameName(ca, src, all)
		if by == "" {
			return ""
		}
		newer = append(newer, by)
	}
	return what + ": an older root than " + strings.Join(newer, ", ") + " - not proposed as a source; re-issue the leaf from the current CA"
}

// carriedCAs maps the fingerprint of each CA an existing target holds to
// the sources of the bundle that writes the target (none known: the
// target's bundle is not in the input).
type carriedCAs map[string][]kube.Key

func (c carriedCAs) add(cas []*x509.Certificate, owners []kube.Key) {
	for _, ca := range cas {
		fp := pki.FingerprintOf(ca).String()
		c[fp] = append(c[fp], owners...)
		if c[fp] == nil {
			c[fp] = []kube.Key{}
		}
	}
}

// carry reports whether every CA of src is held by an existing target
// whose bundle reads another source than src and its copies.
func (c carriedCAs) carry(src Source) bool {
	self := map[kube.Key]bool{keyOf(src.Ref): true}
	for _, a := range src.Also {
		self[keyOf(a.Ref)] = true
	}
	for _, ca := range src.cas {
		owners, ok := c[pki.FingerprintOf(ca).String()]
		if !ok {
			return false
		}
		for _, o := range owners {
			if self[o] {
				return false
			}
		}
	}
	return true
}

// newerOfSameName names the source outside src holding a CA of ca's
// subject with a later NotBefore, or "".
func newerOfSameName(ca *x509.Certificate, src Source, all []Source) string {
	for _, other := range all {
		if other.Ref == src.Ref && other.Key == src.Key {
			continue
		}
		for _, c := range other.cas {
			if pki.Subject(c) == pki.Subject(ca) && c.NotBefore.After(ca.NotBefore) {
				return fmt.Sprintf("the one in %s %s (issued %s)", other.Ref, other.Key, c.NotBefore.UTC().Format("2006-01-02"))
			}
		}
	}
	return ""
}

func describeCAs(cas []*x509.Certificate) string {
	var out []string
	for _, c := range cas {
		out = append(out, fmt.Sprintf("%q, issued %s", pki.Subject(c), c.NotBefore.UTC().Format("2006-01-02")))
	}
	return strings.Join(out, "; ")
}

// consumersOf returns what reads src or one of its copies.
func consumersOf(src Source, consumers readers) []Reader {
	var out []Reader
	for i, c := range append([]Candidate{src.Candidate}, src.Also...) {
		for _, con := range consumers.of(c.Ref, c.node) {
			if i > 0 {
				con.Via = c.Ref.String()
			}
			out = append(out, con)
		}
	}
	return out
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// bundleName derives a lowercase DNS label from the source's name.
func bundleName(ref kube.Ref) string {
	n := notDNS.ReplaceAllString(strings.ToLower(ref.Name), "-")
	n = strings.Trim(n, "-")
	if len(n) > 50 {
		n = strings.Trim(n[:50], "-")
	}
	if n == "" {
		n = "ca"
	}
	return n
}

// uniqueName returns name, else namespace-name, else name-2, -3..., and
// marks it used.
func uniqueName(name, namespace string, used map[string]bool) string {
	var alt []string
	if namespace != "" {
		alt = append(alt, bundleName(kube.Ref{Name: namespace + "-" + name}))
	}
	n := firstFree(func(s string) bool { return used[s] }, name, alt...)
	used[n] = true
	return n
}

// firstFree returns the first of base and alt that is not taken, else
// base-2, base-3, ...
func firstFree(taken func(string) bool, base string, alt ...string) string {
	for _, n := range append([]string{base}, alt...) {
		if !taken(n) {
			return n
		}
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s-%d", base, i); !taken(n) {
			return n
		}
	}
}
