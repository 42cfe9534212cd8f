package trustdiff

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/rotate-certs/rotate-certs/fn/why"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Input is one tree as Build reads it.
type Input struct {
	// Items are the resources, policies included.
	Items []*yaml.RNode
	// Packages are Items split into packages by the repository pass
	// (fn/pass: a policy's directory and below), each with its policies
	// decoded and explained; an item in none is in no package.
	Packages []Package
	// File maps the file a resource was read from to the path shown (the
	// path below the top of the tree); nil shows it as read.
	File func(string) string
	// Targets and workloads are the kind tables the model reads by: the
	// kinds that hold trust, and the kinds whose pods read it (zero: the
	// tables rotate-certs ships; this package's tests add a kind).
	Targets   kube.TargetTable
	workloads policy.WorkloadTable
	// CertFiles are the certificate and key files no build reads, by
	// path below the top, each with the digest of its content: listed
	// when they change, not judged.
	CertFiles map[string]string
	// Ambiguous are the names several objects share in one directory, in
	// this tree or the other one of the change (Ambiguous(Duplicates of
	// each)): their objects are told apart by file and document.
	Ambiguous map[string]bool
	// Memo lends this Build what the Build of the other side read of the
	// objects both share, and keeps what this one reads (nil: nothing).
	Memo *Memo
}

// Package is one package of a tree: its directory, its resources (its
// policies among them) and what the repository pass made of its policies.
type Package struct {
	Dir   string
	Items []*yaml.RNode
	// Decoded are its policies decoded (policy.Decode), by item; one not
	// here is decoded by Build, which reports why it does not decode.
	Decoded map[*yaml.RNode]*policy.RotationPolicy
	// Trust are why each bundle's targets hold each CA (rotate's
	// Explanation), addressed by object key and field: two packages may
	// each hold a target of the same name.
	Trust []why.Trusted
	// Waves are the policies' roll-outs in waves that are not done:
	// which wave rolls each workload, and when.
	Waves []restart.PendingWaves
}

// certKeys are the data keys that hold a certificate with its chain, not
// trust, whatever they hold: a CA Secret's own tls.crt, Istio's plug-in
// ca-cert.pem and cert-chain.pem, the crt.pem of Linkerd's identity issuer
// Secret as its chart writes it (identity.issuer.scheme linkerd.io/tls).
var certKeys = map[string]bool{"crt.pem": true, "tls.crt": true, "ca-cert.pem": true, "cert-chain.pem": true, "cert.pem": true, "tls-combined.pem": true}

// builder builds one Model.
type builder struct {
	in    Input
	model *Model
	nodes map[kube.Ref]*yaml.RNode
	// readers answer who reads each trust object (restart.Readers, the
	// one home of that rule).
	readers *restart.Readers
	// reasons are the packages' Trust rows by package directory and
	// target, pkg the package directory of each item in a package.
	reasons map[place][]why.Trusted
	pkg     map[*yaml.RNode]string
	// bundles are the policies' bundles by package directory and name,
	// decoded the policies.
	bundles map[string]bundleInfo
	decoded map[*yaml.RNode]decoded
	// trustNodes are the objects of the trust objects; embedded the field
	// of those their object holds in a value of its own (embedded.go).
	trustNodes map[*TrustObject]*yaml.RNode
	embedded   map[*TrustObject]string
	// sourceOf are the policies' sources, by sourceKey: the bundle that
	// reads each; trustNS the trustNamespace of the policies' bundles
	// whose target is a trust-manager Bundle, by package directory and
	// Bundle name.
	sourceOf, trustNS map[string]string
	// resources memoizes resource: each object is named for each value,
	// certificate, reader and workload of it, and each naming reads its
	// annotations and makes its files relative.
	resources map[kube.Ref]Resource
	// roots memoizes selfSigned: a fleet holds the same root (one parsed
	// certificate) once per cluster, and each answer is a signature check.
	roots map[*x509.Certificate]bool
}

// place is a value of an object of a package: where an explanation says a
// bundle is written, by package directory, object key and field path.
type place struct {
	pkg string
	at  why.Address
}

// objectsOnly drops the documents that are not objects - a YAML scalar or
// list where a resource belongs: the readers of render and check never
// hand one over, and nothing of trust can be read from it.
func objectsOnly(items []*yaml.RNode) []*yaml.RNode {
	out := items[:0:0]
	for _, item := range items {
		if item.YNode().Kind == yaml.MappingNode {
			out = append(out, item)
		}
	}
	return out
}

// Build maps a tree's resources onto its model.
func Build(in Input) *Model {
	b := &builder{in: in, model: &Model{holders: map[string][]holder{}, presenters: map[string][]Reader{}},
		nodes: map[kube.Ref]*yaml.RNode{}, resources: map[kube.Ref]Resource{}, reasons: map[place][]why.Trusted{}, trustNodes: map[*TrustObject]*yaml.RNode{},
		pkg: map[*yaml.RNode]string{}, bundles: map[string]bundleInfo{}, decoded: map[*yaml.RNode]decoded{}, embedded: map[*TrustObject]string{}}
	for _, p := range in.Packages {
		for _, r := range p.Trust {
			for _, target := range append([]why.Address{r.Target}, r.Others...) { // every target a bundle writes
				k := place{p.Dir, target}
				b.reasons[k] = append(b.reasons[k], r)
			}
		}
	}
	in.Items = objectsOnly(in.Items)
	b.in.Items = in.Items
	b.packages(in.Packages)
	for _, item := range in.Items {
		b.nodes[kube.RefOf(item)] = item // all first: resource reads a built object's files from its node
	}
	b.readers = restart.NewReaders(in.Items, restart.ReadersOptions{
		Kinds:   in.workloads,
		Package: func(n *yaml.RNode) string { return b.pkg[n] },
		File:    func(n *yaml.RNode) string { return b.resource(kube.RefOf(n)).File },
	})
	for _, item := range in.Items {
		b.object(item)
		b.privateKeys(item)
	}
	b.readErrors()
	b.model.certFiles = in.CertFiles
	b.waves()
	certs, problems := b.findCertificates(layout.WithoutPolicies(in.Items))
	b.values(certs)
	b.bundleTrust(certs)
	b.setReaders()
	for _, p := range problems {
		b.problem(p.Ref, fmt.Sprintf("%s %s: %s", p.Ref, p.Field, p.Message))
	}
	in.Memo.done()
	return b.model
}

// problem records what of the object ref could not be read: msg, which
// names it, after its file (every line names its file).
func (b *builder) problem(ref kube.Ref, msg string) {
	file := b.resource(ref).File
	if file != "" {
		msg = file + ": " + msg
	}
	b.model.Problems = append(b.model.Problems, Problem{File: file, Message: kube.ScrubMessage(msg)})
}

// waves sets the wave of each workload a pending roll-out rolls later.
func (b *builder) waves() {
	wave := map[string]string{}
	for _, pkg := range b.in.Packages {
		for _, w := range pkg.Waves {
			for _, p := range w.Pending {
				for _, ref := range p.Workloads {
					wave[b.resource(ref).id()] = fmt.Sprintf("bundle %s: wave %d of %d, due %s", kube.Safe(w.Bundle), p.Number, w.Waves, p.Due.UTC().Format(time.RFC3339))
				}
			}
		}
	}
	for i := range b.model.workloads {
		b.model.workloads[i].wave = wave[b.model.workloads[i].resource.id()]
	}
}

// resource names the object ref as the result shows it (an object a
// kustomization built by its own file and the kustomization: kbuild's
// annotations). An ambiguous name (Input.Ambiguous) is told apart by its
// place.
func (b *builder) resource(ref kube.Ref) Resource {
	if r, ok := b.resources[ref]; ok {
		return r
	}
	r := resourceOf(ref, b.nodes[ref], b.in.File)
	if b.in.Ambiguous[r.name()] {
		r.place = placeOf(ref, r)
	}
	b.resources[ref] = r
	return r
}

// value is the certificates of one value of one resource, with the kind
// of place that holds it and its name (inventory.Found).
type value struct {
	ref   kube.Ref
	field string
	certs []found
	place inventory.Place
	name  string
}

// values groups the certificates found by value and files each value as
// trust, or as certificates presented and CAs held.
func (b *builder) values(certs []found) {
	type at struct {
		ref   kube.Ref // with its file and place in it: not fmt's ref.String()
		field string
	}
	var vs []*value
	byAt := map[at]*value{}
	for _, f := range certs {
		k := at{f.Ref, f.Key()}
		v, ok := byAt[k]
		if !ok {
			v = &value{ref: f.Ref, field: f.Key(), place: f.Place, name: f.Name}
			byAt[k] = v
			vs = append(vs, v)
		}
		v.certs = append(v.certs, f)
	}
	for _, v := range vs {
		node := b.nodes[v.ref]
		if b.isTrust(v, node) {
			b.trust(v, node)
			continue
		}
		b.held(v, node)
	}
}

// isTrust reports whether value v of node holds trust: a caBundle, a
// ClusterTrustBundle, a trust-manager inLine source; or a value of CAs
// only that is not a chain, not a snapshot's (local config), and not a
// certificate with its chain by its name (a Secret's or ConfigMap's
// certificate key; an embedded value's name: embedded.go) - a Secret or
// ConfigMap value, a client configuration's CAs, an env or Helm value. A
// client certificate is presented, never trust.
func (b *builder) isTrust(v *value, node *yaml.RNode) bool {
	if node == nil {
		return false
	}
	switch v.place {
	case inventory.PlaceTrustField:
		return true
	case inventory.PlaceClientCert:
		return false
	}
	if kube.IsLocalConfig(node) || v.place == inventory.PlaceValue && certKeys[dataKey(v.field)] || presented(v) {
		return false
	}
	for _, f := range v.certs {
		if !pki.IsCA(f.Cert) || f.Supplied {
			return false
		}
	}
	return true
}

// dataKey returns the data key of a field path ("data.ca.crt": "ca.crt").
func dataKey(field string) string {
	_, key, _ := strings.Cut(field, ".")
	return key
}

// trust files value v as a trust object.
func (b *builder) trust(v *value, node *yaml.RNode) {
	o := &TrustObject{Resource: b.resource(v.ref), Field: v.field, memory: memoryOf(node), pkg: b.pkg[node], keyPair: ownKeyPair(node, v.field)}
	o.Package = b.packageName(o.pkg)
	for _, f := range v.certs {
		o.cas = append(o.cas, f.Cert)
		b.intermediate(f.Cert)
	}
	for _, r := range b.reasons[place{b.pkg[node], why.Address{Key: kube.KeyOf(node), Field: v.field}}] {
		if o.reasons == nil {
			o.reasons = map[string]reason{}
		}
		o.Bundle = r.Bundle
		o.reasons[r.SHA256] = reason{why: string(r.Reason), source: r.Source}
	}
	o.domain = b.bundles[o.pkg+"\x00"+o.Bundle].domain
	o.sourceOf = b.sourceOf[sourceKey(o.pkg, v.ref.Kind, v.ref.Namespace, v.ref.Name, valueField(o.Resource, v.field))]
	b.trustNodes[o] = node // its readers: readers.go
	if embeds(v) {
		b.embedded[o] = v.field // its holder's own value (embedded.go)
	}
	b.model.Trust = append(b.model.Trust, o)
}

// held files value v: its CAs explain trust elsewhere, its certificates
// that are not self-signed are presented.
func (b *builder) held(v *value, node *yaml.RNode) {
	res := b.resource(v.ref)
	for i, f := range v.certs {
		c := f.Cert
		if pki.IsCA(c) {
			s := sha(c)
			b.model.holders[s] = append(b.model.holders[s], holder{resource: res, key: v.field})
		}
		b.intermediate(c)
		if !b.selfSigned(c) {
			b.model.certs = append(b.model.certs, cert{resource: res, key: f.Key(), cert: c, pkgDir: b.packageName(b.pkg[node])})
			b.model.certs[len(b.model.certs)-1].pos = i
			b.presenters(res, node)
		}
	}
}

// intermediate records c for chains when it is a CA that is not
// self-signed.
func (b *builder) intermediate(c *x509.Certificate) {
	if pki.IsCA(c) && !b.selfSigned(c) {
		b.model.intermediates = append(b.model.intermediates, c)
	}
}

// selfSigned is pki.SelfSigned(c), each certificate checked once.
func (b *builder) selfSigned(c *x509.Certificate) bool {
	if b.roots == nil {
		b.roots = b.in.Memo.selfSigned()
	}
	if self, ok := b.roots[c]; ok {
		return self
	}
	b.roots[c] = pki.SelfSigned(c)
	return b.roots[c]
}

// memoryOf returns node's memory annotations that are set.
func memoryOf(node *yaml.RNode) map[string]string {
	out := map[string]string{}
	if node == nil {
		return out
	}
	annos := node.GetAnnotations(trustbundle.RetiredAnnotation, trustbundle.UnusedAnnotation, trustbundle.PreviousAnnotation, trustbundle.SeenAnnotation)
	for k, v := range annos {
		out[k] = v
	}
	return out
}

// digest is a short hex SHA-256 of nodes as they are written: each node's
// kind, tag, style, value and comments, its content in order (hashed from
// the node tree, not from its YAML text: two trees that write the same
// text hash alike, at a fraction of the cost of writing it); "" for nil.
func digest(nodes ...*yaml.RNode) string {
	h := sha256.New()
	for _, n := range nodes {
		if n != nil {
			hashNode(h, n.YNode())
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// hashNode writes node n and its content to h, each field length-prefixed
// so that no two trees write the same bytes.
func hashNode(h hash.Hash, n *yaml.Node) {
	var num [binary.MaxVarintLen64]byte
	number := func(v uint64) { h.Write(num[:binary.PutUvarint(num[:], v)]) }
	number(uint64(n.Kind))
	number(uint64(n.Style))
	number(uint64(len(n.Content)))
	for _, s := range [...]string{n.ShortTag(), n.Value, n.Anchor, n.HeadComment, n.LineComment, n.FootComment} {
		number(uint64(len(s)))
		io.WriteString(h, s)
	}
	if n.Kind == yaml.AliasNode {
		return // its anchor's content is hashed where it is defined
	}
	for _, c := range n.Content {
		hashNode(h, c)
	}
}
