package initpolicy

import (
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
)

// The trust distribution init finds already in place (nothing to do with
// package wire, which connects a policy to kustomize and kpt), so that the
// policy it proposes writes where workloads already read trust rather than into a new object
// nobody reads: a trust-manager Bundle that reads a source, the objects a
// service mesh's workloads trust, and the namespaces a mesh injects.

// meshTrust is a ConfigMap or Secret whose key a service mesh's workloads
// read as their trust anchors. The mesh copies it into pods at admission,
// so no pod template in git shows the reference.
type meshTrust struct {
	Kind, Name, Key string
	// Mesh is the restart.mesh preset that rolls the workloads it injects.
	Mesh string
	// What says who reads it, for the policy's comments.
	What string
}

// meshTrustObjects are the trust objects of the meshes restart.mesh knows,
// as their charts write them. Istio's istio-ca-root-cert ConfigMaps are not
// among them: istiod writes them from cacerts (see istiodWrites).
var meshTrustObjects = []meshTrust{
	{Kind: "ConfigMap", Name: "linkerd-identity-trust-roots", Key: "ca-bundle.crt", Mesh: policy.MeshLinkerd,
		What: "Linkerd's trust anchors (the linkerd-control-plane chart's identityTrustAnchorsPEM): its proxy injector copies them into every meshed pod"},
	{Kind: "Secret", Name: "cacerts", Key: "root-cert.pem", Mesh: policy.MeshIstio,
		What: "Istio's plug-in CA: istiod hands every workload the roots of its root-cert.pem"},
}

// istiodWrites reports whether it is one of the istio-ca-root-cert
// ConfigMaps istiod writes into every namespace from the roots of its CA
// (and rewrites whenever root-cert.pem differs from them): a render into it
// is undone on apply, and a render warns on such a target; the CA it holds
// comes from elsewhere. Init proposes it neither as a target nor a source.
func istiodWrites(it *yaml.RNode) bool {
	return it.GetKind() == "ConfigMap" && it.GetApiVersion() == "v1" && it.GetName() == trustbundle.IstioRootCertConfigMap
}

// noteIstiodRootCerts notes the istio-ca-root-cert ConfigMaps of the input
// and where Istio's trust is rotated instead: its plug-in CA, Secret
// cacerts key root-cert.pem, which init proposes as a target (with
// restart.mesh: istio) once the input holds it.
func (sc *scan) noteIstiodRootCerts(items []*yaml.RNode) {
	if len(sc.istiodRootCerts) == 0 {
		return
	}
	var namespaces []string
	for _, ns := range sc.istiodRootCerts {
		namespaces = append(namespaces, kube.Safe(ns))
	}
	cacerts := slices.ContainsFunc(items, func(it *yaml.RNode) bool {
		m, ok := meshTrustOf(it.GetKind(), it.GetName(), "")
		return ok && m.Mesh == policy.MeshIstio && it.GetApiVersion() == "v1"
	})
	next := "add Istio's plug-in CA, Secret istio-system/cacerts (or its snapshot: rotate-certs snapshot), to the input: init then proposes it as the target, key root-cert.pem, with restart.mesh: istio, and istiod writes its roots into these ConfigMaps"
	if cacerts {
		next = "Istio's trust is rotated in its plug-in CA, Secret cacerts key root-cert.pem, from which istiod writes them"
	}
	sc.plan.Notes = append(sc.plan.Notes, fmt.Sprintf("ConfigMap %s key root-cert.pem (in %s) is what istiod writes into every namespace from the roots of its CA, overwriting any other value (kept in git, the sync tool and istiod fight over it): proposed neither as a target nor as a source; %s",
		trustbundle.IstioRootCertConfigMap, strings.Join(namespaces, ", "), next))
}

// meshTrustOf returns the mesh trust object of that kind, name and key.
func meshTrustOf(kind, name, key string) (meshTrust, bool) {
	for _, m := range meshTrustObjects {
		if m.Kind == kind && m.Name == name && (key == "" || m.Key == key) {
			return m, true
		}
	}
	return meshTrust{}, false
}

// meshTarget is a mesh trust object in the input (in one or more
// namespaces) that a source feeds: it is proposed as that source's target.
type meshTarget struct {
	meshTrust
	// Namespaces are where the input holds it, in input order.
	Namespaces []string
	// CAs are the CAs it holds at Key now.
	CAs []*x509.Certificate
	// nodes are its objects, in input order.
	nodes []*yaml.RNode
}

func (m meshTarget) key() kube.Key {
	return kube.Key{Kind: m.Kind, Namespace: m.Namespaces[0], Name: m.Name}
}

// inPlace is the trust distribution the input already has: its
// trust-manager Bundles and mesh trust objects.
type inPlace struct {
	bundles []*yaml.RNode
	meshes  []meshTarget
}

// findMeshTargets reads the mesh trust objects of items (not those a
// RotationPolicy or a trust-manager Bundle of the input already writes,
// nor snapshots) and keeps those that another candidate feeds: they are
// taken out of cands (they are targets, not sources). One no candidate
// feeds stays a candidate, with a note.
func (sc *scan) findMeshTargets(items []*yaml.RNode, cands []Candidate, bundles []*yaml.RNode) ([]Candidate, []meshTarget) {
	var targets []meshTarget
	index := map[kube.Key]int{}
	for _, it := range items {
		m, ok := meshTrustOf(it.GetKind(), it.GetName(), "")
		if !ok || it.GetApiVersion() != "v1" || kube.IsLocalConfig(it) || writtenByBundle(bundles, m) {
			continue
		}
		if _, ok := sc.policies.targets[kube.KeyOf(it)]; ok {
			continue
		}
		k := kube.Key{Kind: m.Kind, Name: m.Name}
		i, seen := index[k]
		if !seen {
			i = len(targets)
			index[k] = i
			targets = append(targets, meshTarget{meshTrust: m})
		}
		// Several clusters read at once hold it in the same namespace:
		// a target lists each namespace once.
		t := &targets[i]
		if !slices.Contains(t.Namespaces, it.GetNamespace()) {
			t.Namespaces = append(t.Namespaces, it.GetNamespace())
		}
		t.CAs = append(t.CAs, casAt(it, m.Key, sc.now)...)
		t.nodes = append(t.nodes, it)
	}
	var fed []meshTarget
	for _, t := range targets {
		if !slices.ContainsFunc(cands, func(c Candidate) bool { return !t.holds(c) && feeds(c.cas, t.CAs) }) {
			sc.plan.Notes = append(sc.plan.Notes, fmt.Sprintf("%s %s (key %s) is %s; no other Secret or ConfigMap in the input holds its CA or a newer CA of the same name: add the CA's source to propose it as the target",
				t.Kind, t.Name, t.Key, t.What))
			continue
		}
		fed = append(fed, t)
	}
	kept := cands[:0:0]
	for _, c := range cands {
		if !slices.ContainsFunc(fed, func(t meshTarget) bool { return t.holds(c) }) {
			kept = append(kept, c)
		}
	}
	return kept, fed
}

// holds reports whether c is one of the target's objects.
func (m meshTarget) holds(c Candidate) bool {
	return c.Ref.Kind == m.Kind && c.Ref.Name == m.Name && slices.Contains(m.Namespaces, c.Ref.Namespace)
}

// feeds reports whether a source of cas is where the CAs of a trust
// object come from: it holds one of them, or a newer CA of the same
// subject (a rotated CA keeps its name).
func feeds(cas, trusted []*x509.Certificate) bool {
	for _, c := range cas {
		for _, t := range trusted {
			if pki.FingerprintOf(c) == pki.FingerprintOf(t) ||
				pki.Subject(c) == pki.Subject(t) && !c.NotBefore.Before(t.NotBefore) {
				return true
			}
		}
	}
	return false
}

// casAt returns the CA certificates valid at now in the value of key.
func casAt(it *yaml.RNode, key string, now time.Time) []*x509.Certificate {
	values, err := kube.Values(it)
	if err != nil {
		return nil
	}
	var out []*x509.Certificate
	for _, v := range values {
		if v.Key != key {
			continue
		}
		dec, err := pki.DecodePEM(v.Bytes)
		if err != nil {
			return nil
		}
		for _, c := range dec.Certificates {
			if pki.IsCA(c) && !now.After(c.NotAfter) {
				out = append(out, c)
			}
		}
	}
	return out
}

// writtenByBundle reports whether a trust-manager Bundle of the input
// writes the mesh trust object (a Bundle writes objects named like
// itself).
func writtenByBundle(bundles []*yaml.RNode, m meshTrust) bool {
	for _, b := range bundles {
		if t, ok := certmanager.ReadBundleTarget(b); ok && t.Name == m.Name && t.Writes(m.Kind, m.Key) {
			return true
		}
	}
	return false
}

// trustManagerBundles returns the trust-manager Bundles of items.
func trustManagerBundles(items []*yaml.RNode) []*yaml.RNode {
	var out []*yaml.RNode
	for _, it := range items {
		if certmanager.IsBundle(it) && !kube.IsLocalConfig(it) {
			out = append(out, it)
		}
	}
	return out
}

// targetInPlace sets b's target to what the input already has in place for
// src: the trust-manager Bundle that reads it, else the mesh trust object
// it feeds. It returns the key of that target, false when there is none.
func (sc *scan) targetInPlace(w inPlace, b *Bundle, src Source, consumers readers) (kube.Key, bool) {
	for _, node := range w.bundles {
		if c, ok := readBy(node, src); ok {
			b.TargetKind, b.TargetName, b.TargetNamespace, b.TargetKey = string(kube.TargetBundle), node.GetName(), "", ""
			if c.Ref.Namespace != policy.DefaultTrustNamespace {
				b.trustNamespace = c.Ref.Namespace
			}
			b.targetExists, b.Name = true, sc.bundleNameFor(node)
			b.wired = fmt.Sprintf("trust-manager Bundle %s reads %s: it is the target (rotate-certs reads its own spec.sources, and keeps the CAs that leave them trusted through the overlap)",
				kube.Safe(node.GetName()), c.Ref)
			sc.noteUnreadSources(node, c.Ref.Namespace)
			t, _ := certmanager.ReadBundleTarget(node)
			b.targetReaders = consumers.ofBundle(node)
			for _, kind := range t.Kinds() {
				if m, ok := meshTrustOf(kind, t.Name, firstOf(t.Keys[kind])); ok {
					b.Mesh = m.Mesh
				}
			}
			return kube.Key{Kind: string(kube.TargetBundle), Name: node.GetName()}, true
		}
	}
	for _, m := range w.meshes {
		if !feeds(src.cas, m.CAs) {
			continue
		}
		b.TargetKind, b.TargetName, b.TargetKey = m.Kind, m.Name, m.Key
		b.TargetNamespace, b.OtherNamespaces = m.Namespaces[0], m.Namespaces[1:]
		b.targetExists, b.Mesh = true, m.Mesh
		b.wired = fmt.Sprintf("%s %s key %s is %s: it is the target, under its own name and key", m.Kind, m.Name, m.Key, m.What)
		for _, node := range m.nodes {
			for _, c := range consumers.of(kube.RefOf(node), node) {
				if !slices.ContainsFunc(b.targetReaders, func(have Reader) bool { return have.Ref == c.Ref }) {
					b.targetReaders = append(b.targetReaders, c)
				}
			}
		}
		return m.key(), true
	}
	return kube.Key{}, false
}

// noteUnreadSources notes each Secret or ConfigMap the trust-manager
// Bundle node names as a source that the input does not hold in its trust
// namespace ns: a render reads every one of them (a CA it cannot see
// could not be carried when it leaves), and fails without it.
func (sc *scan) noteUnreadSources(node *yaml.RNode, ns string) {
	for _, bs := range certmanager.ReadBundleSources(node) {
		if bs.Selector != nil {
			continue // a selector names no object to add
		}
		if sc.taken[kube.Key{Kind: bs.Kind, Namespace: ns, Name: bs.Name}] {
			continue
		}
		note := fmt.Sprintf("trust-manager Bundle %s also reads %s %s/%s, which is not in the input: a render of the Bundle needs it - add it, or a snapshot of it (rotate-certs snapshot)",
			kube.Safe(node.GetName()), bs.Kind, ns, kube.Safe(bs.Name))
		if !slices.Contains(sc.plan.Notes, note) {
			sc.plan.Notes = append(sc.plan.Notes, note)
		}
	}
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// readBy returns the value of src (its candidate or a copy) that the
// trust-manager Bundle node names as a source.
func readBy(node *yaml.RNode, src Source) (Candidate, bool) {
	for _, bs := range certmanager.ReadBundleSources(node) {
		for _, c := range append([]Candidate{src.Candidate}, src.Also...) {
			if c.Ref.Kind == bs.Kind && c.Ref.Name == bs.Name {
				return c, true
			}
		}
	}
	return Candidate{}, false
}

// meshNamespaces maps each mesh to the Namespaces of items whose own
// labels or annotations make the mesh inject every pod in them, by the
// rules restart.mesh applies, each with the rule that decided.
func meshNamespaces(items []*yaml.RNode) map[string][]string {
	out := map[string][]string{}
	for _, it := range items {
		if it.GetKind() != "Namespace" || it.GetApiVersion() != "v1" {
			continue
		}
		ns := &restart.Namespace{Labels: it.GetLabels(), Annotations: it.GetAnnotations()}
		for _, mesh := range policy.Meshes {
			if in := restart.Injected(policy.Restart{Mesh: mesh}, restart.Pod{Namespace: it.GetName()}, ns); in.Injected {
				name := kube.Safe(it.GetName())
				if slices.ContainsFunc(out[mesh], func(e string) bool { return strings.HasPrefix(e, name+" (") }) {
					continue // once, when several clusters hold the Namespace
				}
				why := strings.TrimSuffix(in.Why, " (restart.mesh: "+mesh+")")
				out[mesh] = append(out[mesh], fmt.Sprintf("%s (%s)", name, why))
			}
		}
	}
	return out
}

// proposeMeshRestarts gives each bundle whose target a mesh's workloads
// trust the namespaces that mesh injects, and notes a mesh whose
// namespaces no bundle's target reaches.
func (sc *scan) proposeMeshRestarts(injected map[string][]string) {
	for _, mesh := range policy.Meshes {
		found := false
		for i := range sc.plan.Bundles {
			if b := &sc.plan.Bundles[i]; b.Mesh == mesh {
				b.MeshNamespaces, found = injected[mesh], true
			}
		}
		if !found && len(injected[mesh]) > 0 {
			var objs []string
			for _, m := range meshTrustObjects {
				if m.Mesh == mesh {
					objs = append(objs, fmt.Sprintf("%s %s", m.Kind, m.Name))
				}
			}
			sc.plan.Notes = append(sc.plan.Notes, fmt.Sprintf("%s injects the pods of Namespace %s, but no bundle's target is what its proxies trust (%s): give the bundle that writes it restart.mesh: %s",
				meshNames[mesh], strings.Join(injected[mesh], ", "), strings.Join(objs, " or "), mesh))
		}
	}
}

// bundleNameFor returns the name of the policy bundle that already renders
// the trust-manager Bundle node: the one a RotationPolicy of the input
// targets it with, else the one its own inLine source names (a render
// refuses another name); "" when none does.
func (sc *scan) bundleNameFor(node *yaml.RNode) string {
	if name, ok := sc.policies.bundles[node.GetName()]; ok {
		return name
	}
	seq := kube.At(node, "spec", "sources")
	if seq == nil || seq.YNode().Kind != yaml.SequenceNode {
		return ""
	}
	for _, e := range seq.YNode().Content {
		in := kube.At(yaml.NewRNode(e), "inLine")
		if in == nil || in.YNode().Kind != yaml.ScalarNode {
			continue
		}
		if name, ok := trustbundle.OwnInLineBundle(in.YNode().Value); ok && kube.ValidDNSLabel(name) {
			return name
		}
	}
	return ""
}
