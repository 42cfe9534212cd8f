// Package pass is the one pass every command makes over what it reads
// (render, check, diff, init): it splits the input into packages by the
// layout's one rule (fn/layout: a RotationPolicy applies to its directory
// and below), decodes each policy once (Decode; Source.Lighten for a
// command that then needs only its decoded form and its name), builds the
// repository's trust domains once when the command sees them whole
// (Domains), explains each package's policies (Package.Explain) and hands
// the packages to the command on every core (Each), each parsed when a
// worker takes it and let go when the command is done with it, what each
// gave back in package order. A command reads its input into a Source -
// the text of a tree (resio.ScanTree, resio.ScanPaths), or resources
// already read - splits it and runs Each with what it does to one package.
package pass

import (
	"fmt"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/parallel"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Source is what a pass reads packages from: the text of a tree, each
// package's files parsed when its turn comes, or resources already read.
type Source struct {
	tree *resio.Tree
	// kept are the tree's policies as its scan kept them; items the
	// resources of a source of resources.
	kept  []*yaml.RNode
	items []*yaml.RNode
	// shared are the files of the tree that more than one part of a split
	// reads (a file whose resources name files of several packages): no
	// package lets them go.
	shared map[string]bool
	// decoded are the kept policies Lighten decoded, by their node (its
	// stub when it decoded).
	decoded map[*yaml.RNode]Policy
}

// FromTree is a tree read a package at a time: t's Kept must be its
// policies (resio.ScanTree or resio.ScanPaths with layout.IsPolicy).
func FromTree(t *resio.Tree) *Source { return &Source{tree: t, kept: t.Kept} }

// Lighten decodes the policies s kept, on every core, and keeps of each
// that decodes its decoded form and its name (kube.Stub), the rest of its
// tree let go; the packages a split makes of s hold them decoded. For a
// command that reads its policies through Decoded only and names them by
// their node (check), before it splits: a scan keeps every policy of a
// repository (and the parser's slab each was cut from) until its package
// is done - at 10,000 clusters a third of what check holds. A render,
// which runs each policy's node, does not.
func (s *Source) Lighten() {
	s.decoded = make(map[*yaml.RNode]Policy, len(s.kept))
	parallel.Map(len(s.kept), 0, func() func(int) Policy {
		return func(i int) Policy {
			pol, err := policy.Decode(s.kept[i])
			if err != nil {
				return Policy{Node: s.kept[i], Err: err}
			}
			return Policy{Node: kube.Stub(s.kept[i]), Decoded: pol}
		}
	}, func(i int, p Policy) {
		s.kept[i] = p.Node
		s.decoded[p.Node] = p
	})
}

// policy is node as a package's policy: decoded when Lighten decoded it.
func (s *Source) policy(node *yaml.RNode) Policy {
	if p, ok := s.decoded[node]; ok {
		return p
	}
	return Policy{Node: node}
}

// FromItems is resources already read, the policies among them.
func FromItems(items []*yaml.RNode) *Source { return &Source{items: items} }

// unit is what a split places: a resource of a source of resources, or
// the resources of one file of a tree that name one file (name, "" for
// none: stdin's).
type unit struct {
	name string
	file string
	item *yaml.RNode
}

// Policy is one RotationPolicy of a package, decoded once (Decode).
type Policy struct {
	Node    *yaml.RNode
	Decoded *policy.RotationPolicy
	// Err is why it does not decode (policy.Decode's error).
	Err error
}

// Package is one package of a Source.
type Package struct {
	// Dir is the package's directory as its resources' paths name it
	// (slash-separated, "." for the top); "" for a package of no
	// directory (the resources in no package, a --policy run).
	Dir      string
	Policies []Policy
	// Domains are the repository's trust domains when the command sees
	// them whole (Domains), nil when it sees each in part. Read only,
	// shared by every package.
	Domains map[string]*anchors.Domain
	// Verified, when set, remembers the signature checks of the package's
	// explanations for the other packages and passes that share it (diff
	// sets one for both its sides); nil: each explanation its own.
	Verified *anchors.Verified

	src   *Source
	units []unit
}

// Split splits src into packages (layout's one splitter: every directory holding a
// RotationPolicy is one, a deeper one left out of the outer one), in
// directory order, and rest: what is in none, with the policies read from
// no file (stdin's), Dir "".
func (s *Source) Split() (pkgs []*Package, rest *Package) {
	return s.SplitAt(layout.IsPolicy, nil)
}

// SplitAt is Split with other package roots (layout.Split's): init splits
// at kustomizations and Kptfiles too.
func (s *Source) SplitAt(root func(*yaml.RNode) bool, dirs []string) (pkgs []*Package, rest *Package) {
	nodes, units := s.units()
	// The packages hold the policies from here, each until it is done: a
	// policy node the scan kept holds the parser's slab it was cut from,
	// and with it much of the scan.
	s.kept = nil
	parts, others := layout.Split(nodes, root, dirs)
	for _, p := range parts {
		pkg := &Package{Dir: p.Dir, src: s, units: unitsOf(p.Items, units)}
		for _, n := range p.Policies {
			pkg.Policies = append(pkg.Policies, s.policy(n))
		}
		pkgs = append(pkgs, pkg)
	}
	rest = &Package{src: s, units: unitsOf(others, units)}
	for _, n := range others {
		if layout.IsPolicy(n) {
			rest.Policies = append(rest.Policies, s.policy(n))
		}
	}
	s.decoded = nil
	s.share(append(pkgs, rest))
	return pkgs, rest
}

// units returns what a split places: the policies and one stand-in per
// file and name of a tree (an empty object annotated with the name, that
// layout places as it places resources), or the resources; and the unit
// of each stand-in or resource.
func (s *Source) units() ([]*yaml.RNode, map[*yaml.RNode]unit) {
	if s.tree == nil {
		out := make(map[*yaml.RNode]unit, len(s.items))
		for _, it := range s.items {
			out[it] = unit{name: layout.FileOf(it), item: it}
		}
		return s.items, out
	}
	nodes := append([]*yaml.RNode(nil), s.kept...)
	out := make(map[*yaml.RNode]unit, len(s.tree.Files))
	stand := newStandIns()
	for _, f := range s.tree.Files {
		names := f.Names
		if names == nil {
			names = []string{f.Path}
		}
		for _, name := range names {
			n := stand.of(name)
			nodes = append(nodes, n)
			out[n] = unit{name: name, file: f.Path}
		}
	}
	return nodes, out
}

// standIns makes stand-ins: empty objects, each annotated with a name
// (metadata.annotations[internal.config.kubernetes.io/path]). A split
// makes one per file of a tree (110,000 at 10,000 clusters) and holds
// them all at once, so each is one allocation of its four nodes, the
// three keys shared by all - nothing writes a stand-in.
type standIns struct{ metadata, annotations, path *yaml.Node }

func newStandIns() standIns {
	key := func(k string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: k} }
	return standIns{metadata: key("metadata"), annotations: key("annotations"), path: key(kioutil.PathAnnotation)}
}

// of is the stand-in of name (no annotation for "").
func (k standIns) of(name string) *yaml.RNode {
	if name == "" {
		return yaml.NewRNode(&yaml.Node{Kind: yaml.MappingNode})
	}
	b := new(struct {
		nodes   [4]yaml.Node
		content [6]*yaml.Node
	})
	value, path, annos, top := &b.nodes[0], &b.nodes[1], &b.nodes[2], &b.nodes[3]
	*value = yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: name}
	b.content[0], b.content[1] = k.path, value
	*path = yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: b.content[0:2:2]}
	b.content[2], b.content[3] = k.annotations, path
	*annos = yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: b.content[2:4:4]}
	b.content[4], b.content[5] = k.metadata, annos
	*top = yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: b.content[4:6:6]}
	return yaml.NewRNode(top)
}

// unitsOf returns the units among nodes, in their order.
func unitsOf(nodes []*yaml.RNode, units map[*yaml.RNode]unit) []unit {
	var out []unit
	for _, n := range nodes {
		if u, ok := units[n]; ok {
			out = append(out, u)
		}
	}
	return out
}

// share records the files more than one of parts reads.
func (s *Source) share(parts []*Package) {
	owner := map[string]*Package{}
	for _, p := range parts {
		for _, u := range p.units {
			if u.file == "" {
				continue
			}
			if o, ok := owner[u.file]; ok && o != p {
				if s.shared == nil {
					s.shared = map[string]bool{}
				}
				s.shared[u.file] = true
			}
			owner[u.file] = p
		}
	}
}

// Join is one package of dir and policies holding what parts hold, in
// their order: render's --policy package.
func Join(dir string, policies []*yaml.RNode, parts ...*Package) *Package {
	p := &Package{Dir: dir}
	for _, n := range policies {
		p.Policies = append(p.Policies, Policy{Node: n})
	}
	for _, part := range parts {
		if part != nil {
			p.src = part.src
			p.units = append(p.units, part.units...)
		}
	}
	return p
}

// All is all of src as one package of dir and policies, in the source's
// order: check's --policy package.
func (s *Source) All(dir string, policies []*yaml.RNode) *Package {
	nodes, units := s.units()
	s.kept = nil
	p := Join(dir, policies)
	p.src, p.units = s, unitsOf(nodes, units)
	return p
}

// Where is the part of p whose resources name a file (read from one: in
// true) or none (read from stdin: in false), with p's policies when in is
// false: check's package of stdin.
func (p *Package) Where(fromFile bool) *Package {
	out := &Package{Dir: p.Dir, src: p.src}
	for _, u := range p.units {
		if (u.name != "") == fromFile {
			out.units = append(out.units, u)
		}
	}
	if !fromFile {
		out.Policies = p.Policies
	}
	return out
}

// Files returns the files p reads, in order, once each.
func (p *Package) Files() []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range p.units {
		if u.file != "" && !seen[u.file] {
			seen[u.file] = true
			out = append(out, u.file)
		}
	}
	return out
}

// Empty reports whether p holds no resource.
func (p *Package) Empty() bool { return len(p.units) == 0 }

// Read returns p's resources, its policies among them, in the source's
// order: a tree's files parsed again (resio.Tree.Read, which a render
// writes back), or the resources read. Packages may be read at once.
func (p *Package) Read() (*resio.Resources, error) {
	if p.src == nil || p.src.tree == nil {
		r := &resio.Resources{}
		for _, u := range p.units {
			r.Items = append(r.Items, u.item)
		}
		return r, nil
	}
	r, err := p.src.tree.Read(p.Files())
	if err != nil {
		return nil, err
	}
	if names := p.names(); names != nil {
		r.Items = named(r.Items, names)
		r.FunctionConfigs = named(r.FunctionConfigs, names)
	}
	return r, nil
}

// names returns the names of p's units when a file of p holds resources
// that name another (resio.TreeFile.Names): those are not all p's; nil
// when every resource of its files is.
func (p *Package) names() map[string]bool {
	mixed := false
	for _, u := range p.units {
		if u.name != u.file {
			mixed = true
		}
	}
	if !mixed {
		return nil
	}
	out := map[string]bool{}
	for _, u := range p.units {
		out[u.name] = true
	}
	return out
}

// named returns the nodes that name a file of names.
func named(nodes []*yaml.RNode, names map[string]bool) []*yaml.RNode {
	var out []*yaml.RNode
	for _, n := range nodes {
		if names[layout.FileOf(n)] {
			out = append(out, n)
		}
	}
	return out
}

// release lets the text of p's files go: they cannot be read again.
func (p *Package) release() {
	if p.src == nil || p.src.tree == nil {
		return
	}
	var files []string
	for _, f := range p.Files() {
		if !p.src.shared[f] {
			files = append(files, f)
		}
	}
	p.src.tree.Release(files)
}

// Decode decodes every policy of pkgs, each once, on every core; a
// policy decoded already (Decoded set: diff's other side decoded the same
// node, or Source.Lighten) or found not to decode (Err set) is kept.
func Decode(pkgs []*Package) {
	var all []*Policy
	for _, p := range pkgs {
		for i := range p.Policies {
			if p.Policies[i].Decoded == nil && p.Policies[i].Err == nil {
				all = append(all, &p.Policies[i])
			}
		}
	}
	parallel.Map(len(all), 0, func() func(int) Policy {
		return func(i int) Policy {
			pol, err := policy.Decode(all[i].Node)
			return Policy{Node: all[i].Node, Decoded: pol, Err: err}
		}
	}, func(i int, d Policy) { *all[i] = d })
}

// Domains builds the trust domains of a repository seen whole from pkgs
// (rotate.Domains: at the render time at when set, else each policy's
// clock over wall) and gives them to every package of pkgs. A package
// whose policy has a bundle in a domain is parsed for it, one at a time,
// and let go once its certificates are taken. A policy that names no
// domain (namesDomain) is not decoded for it: a command that decodes its
// policies only as it runs each package (render) decodes each once; one
// that decoded them all (Decode) has them.
func Domains(pkgs []*Package, at time.Time, wall func() time.Time) error {
	var in []rotate.Package
	for _, p := range pkgs {
		for i := range p.Policies {
			pol := &p.Policies[i]
			if !namesDomain(*pol) {
				continue
			}
			if pol.Decoded == nil && pol.Err == nil {
				pol.Decoded, pol.Err = policy.Decode(pol.Node)
			}
			if pol.Err != nil {
				continue // its own run reports it
			}
			in = append(in, rotate.Package{Dir: p.Dir, Policy: pol.Node, Decoded: pol.Decoded, Read: func() ([]*yaml.RNode, error) {
				r, err := p.Read()
				if err != nil {
					return nil, err
				}
				return r.Items, nil
			}})
		}
	}
	domains, err := rotate.Domains(in, at, wall)
	if err != nil {
		return err
	}
	for _, p := range pkgs {
		p.Domains = domains
	}
	return nil
}

// namesDomain reports whether pol may have a bundle in a trust domain:
// decoded, a bundle with a domain; else a bundle of its node's
// spec.trustBundles with a domain key, or one whose keys a merge key may
// bring. Any other policy adds nothing to a domain, decoded or not.
func namesDomain(pol Policy) bool {
	if pol.Decoded != nil {
		return pol.Decoded.InDomain()
	}
	bundles := kube.At(pol.Node, "spec", "trustBundles")
	if bundles == nil || bundles.YNode().Kind != yaml.SequenceNode {
		return bundles != nil // not a list: let the decoding say so
	}
	for _, b := range bundles.YNode().Content {
		if b.Kind != yaml.MappingNode || kube.MapValue(b, "domain") != nil || kube.MapValue(b, "<<") != nil {
			return true
		}
	}
	return false
}

// Explained is one policy of a package, explained.
type Explained struct {
	Policy
	rotate.Explanation
	// Err is why the policy cannot be explained: it does not decode
	// ("REF: error"), or its bundles cannot be rendered.
	Err error
}

// Explain explains each policy of p over items, p's resources without its
// policies (layout.WithoutPolicies), at now: the rules' dry run (rotate's
// ExplainPolicy) with the trust domains the pass sees, each policy decoded
// once, each row named with p's directory. check's report and diff's
// model read it.
func (p *Package) Explain(items []*yaml.RNode, now time.Time) []Explained {
	out := make([]Explained, len(p.Policies))
	for i, pol := range p.Policies {
		out[i].Policy = pol
		if pol.Err != nil {
			out[i].Err = fmt.Errorf("%s: %w", kube.RefOf(pol.Node), pol.Err)
			continue
		}
		e, err := rotate.Processor{Domains: p.Domains, Package: p.Dir, Verified: p.Verified}.ExplainPolicy(items, pol.Node, pol.Decoded, now)
		for j := range e.Trust {
			e.Trust[j].Package = p.Dir
		}
		out[i].Explanation, out[i].Err = e, err
	}
	return out
}

// Each runs do on every package of pkgs on workers goroutines (0: one per
// core), with the package's resources (Read) or why they could not be
// read, and hands what it returned to done on the caller's goroutine in
// the order of pkgs, as a serial run would: what done writes is that of
// one package after the other. Each package is parsed when a worker takes
// it and let go when do returns (its text and its policies): what a pass
// holds is the source, the packages in flight and what do returned.
func Each[R any](pkgs []*Package, workers int, do func(p *Package, r *resio.Resources, err error) R, done func(i int, result R)) {
	parallel.Map(len(pkgs), workers, func() func(int) R {
		return func(i int) R {
			p := pkgs[i]
			r, err := p.Read()
			out := do(p, r, err)
			p.release()
			p.Policies = nil // done with: let them go
			return out
		}
	}, done)
}
