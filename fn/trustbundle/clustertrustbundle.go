package trustbundle

import (
	"crypto/x509"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A target kind of kube.StoreField holds the bundle as PEM at one field of
// one cluster-scoped object: a ClusterTrustBundle (certificates.k8s.io),
// the cluster-wide trust object that pods mount through a projected
// clusterTrustBundle volume, which the kubelet keeps up to date, holds it
// in spec.trustBundle. Its row of the target-kind table gives the group,
// versions, field and whether only CAs are accepted; a kind to which
// target.signerName applies has spec.signerName checked and written.

// fieldTarget is a target kind of kube.StoreField, d its row.
type fieldTarget struct {
	*renderer
	d kube.TargetDescriptor
}

// current returns what the policy's sources hold.
func (r *fieldTarget) current() ([]*x509.Certificate, bool) { return r.readSources(), true }

// field returns the path of the PEM, for messages and memory.
func (r *fieldTarget) field() string { return kube.JoinPath(r.d.Field) }

// slots yields the target object's PEM field.
func (r *fieldTarget) slots() iter.Seq[slot] {
	return func(yield func(slot) bool) {
		key := kube.Key{Kind: string(r.d.Kind), Name: r.bundle.Target.Name}
		node := r.env.Index.GetIn(r.d.Group, key)
		field := r.field()
		s := slot{key: key, ref: kube.Ref{APIVersion: r.d.Versions[0], Kind: key.Kind, Name: key.Name}, node: node,
			memKey: field, field: field, limit: maxValueBytes,
			limitWhy: fmt.Sprintf("(1 MiB) the API server accepts in a %s's %s", r.d.Kind, field)}
		if node != nil {
			s.ref = kube.RefOf(node)
			var ok bool
			if s.parent, s.previous, ok = r.readObject(node); !ok {
				return
			}
		}
		yield(s)
	}
}

// write writes the bundle into the PEM field, creating the object (at the
// row's first version) when absent.
func (r *fieldTarget) write(s slot, res *Target, pem []byte) (bool, bool) {
	if r.d.CAOnly && !r.allCAs(s.ref, *res) {
		return false, false
	}
	parent := s.parent
	if s.node == nil {
		node := r.newObject(r.d.Versions[0], s.key)
		r.created(res, node, s.key)
		var err error
		if parent, err = node.Pipe(yaml.LookupCreate(yaml.MappingNode, r.d.Field[:len(r.d.Field)-1]...)); err != nil {
			r.errorf(s.ref, kube.JoinPath(r.d.Field[:len(r.d.Field)-1]), "bundle %q: %v", r.bundle.Name, err)
			return false, false
		}
		if signer := r.bundle.Target.SignerName; signer != "" && r.d.Applies("signerName") {
			_ = parent.PipeE(yaml.SetField("signerName", yaml.NewStringRNode(signer)))
		}
	}
	changed, err := setString(parent, r.d.Field[len(r.d.Field)-1], string(pem))
	if err != nil {
		r.errorf(s.ref, s.field, "bundle %q: %s: set %s: %v", r.bundle.Name, s.ref, s.field, err)
		return false, false
	}
	return changed, true
}

// readObject checks an existing target object and returns the map that
// holds the PEM field and the certificates in it. A kind with a signer
// must have the policy's: the API refuses to change it.
func (r *fieldTarget) readObject(node *yaml.RNode) (*yaml.RNode, []*x509.Certificate, bool) {
	ref := kube.RefOf(node)
	if v := node.GetApiVersion(); !slices.Contains(r.d.Versions, v) {
		r.errorf(ref, "apiVersion", "bundle %q: %s has apiVersion %s; rotate-certs writes %s %ss", r.bundle.Name, ref, kube.Quote(v), strings.Join(r.d.Versions, " and "), r.d.Kind)
		return nil, nil, false
	}
	parent, ok := r.parentOf(node, ref)
	if !ok {
		return nil, nil, false
	}
	if r.d.Applies("signerName") && !r.sameSigner(parent, ref) {
		return nil, nil, false
	}
	field := r.field()
	text, _, err := scalar(parent, r.d.Field[len(r.d.Field)-1])
	if err != nil {
		r.errorf(ref, field, "bundle %q: %s %s %v", r.bundle.Name, ref, field, err)
		return nil, nil, false
	}
	certs, ok := r.readHeld(ref, field, []byte(text))
	return parent, certs, ok
}

// parentOf returns the map that holds the PEM field (spec), created when
// absent.
func (r *fieldTarget) parentOf(node *yaml.RNode, ref kube.Ref) (*yaml.RNode, bool) {
	parent := node
	for i, name := range r.d.Field[:len(r.d.Field)-1] {
		at := kube.JoinPath(r.d.Field[:i+1])
		next, err := mapping(parent, name)
		if err != nil {
			r.errorf(ref, at, "bundle %q: %s %s %v", r.bundle.Name, ref, at, err)
			return nil, false
		}
		if next == nil {
			if next, err = parent.Pipe(yaml.LookupCreate(yaml.MappingNode, name)); err != nil {
				r.errorf(ref, at, "bundle %q: %v", r.bundle.Name, err)
				return nil, false
			}
		}
		parent = next
	}
	return parent, true
}

// sameSigner checks that the object's signerName (beside the PEM field) is
// the policy's target.signerName.
func (r *fieldTarget) sameSigner(parent *yaml.RNode, ref kube.Ref) bool {
	at := kube.JoinPath(append(slices.Clone(r.d.Field[:len(r.d.Field)-1]), "signerName"))
	signer, _, err := scalar(parent, "signerName")
	if err != nil {
		r.errorf(ref, at, "bundle %q: %s %s %v", r.bundle.Name, ref, at, err)
		return false
	}
	if want := r.bundle.Target.SignerName; signer != want {
		r.errorf(ref, at, "bundle %q: %s has %s %s but the policy's target.signerName is %q; the API server refuses to change a signerName - make them agree (a %s for another signer is a new object, with a name of its own)",
			r.bundle.Name, ref, at, kube.Quote(signer), want, r.d.Kind)
		return false
	}
	return true
}

// allCAs fails when the rendered bundle holds a certificate that is not a
// CA: the API server accepts only CA certificates (basic constraints with
// the CA bit) in a kind whose row says CAOnly (a ClusterTrustBundle).
func (r *fieldTarget) allCAs(ref kube.Ref, t Target) bool {
	var leaves []string
	for _, c := range t.Outcome.Certificates() {
		if !c.IsCA || !c.BasicConstraintsValid {
			leaves = append(leaves, pki.Describe(c))
		}
	}
	if len(leaves) == 0 {
		return true
	}
	r.errorf(ref, r.field(), "bundle %q: %s would hold %s, which %s not a CA certificate; the API server accepts only CA certificates in a %s - point the source at the issuing CA",
		r.bundle.Name, ref, strings.Join(leaves, ", "), map[bool]string{true: "is", false: "are"}[len(leaves) == 1], r.d.Kind)
	return false
}
