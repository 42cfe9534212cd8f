package trustbundle

import (
	"crypto/x509"
	"iter"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A ClusterTrustBundle (certificates.k8s.io) is the cluster-wide trust
// object: pods mount it through a projected clusterTrustBundle volume,
// which the kubelet keeps up to date. The bundle is its spec.trustBundle.

const (
	// ClusterTrustBundleGroup is the API group of ClusterTrustBundles.
	ClusterTrustBundleGroup = "certificates.k8s.io"
	// ClusterTrustBundleVersion is the apiVersion a created
	// ClusterTrustBundle gets: beta since Kubernetes 1.33.
	ClusterTrustBundleVersion = ClusterTrustBundleGroup + "/v1beta1"
	// clusterTrustBundleAlpha is the version of Kubernetes 1.27-1.32; an
	// object already in that version is updated in it.
	clusterTrustBundleAlpha = ClusterTrustBundleGroup + "/v1alpha1"
)

// trustBundleLimit says whose limit MaxValueBytes is for spec.trustBundle.
const trustBundleLimit = "(1 MiB) the API server accepts in a ClusterTrustBundle's spec.trustBundle"

// clusterTrustBundle is the ClusterTrustBundle target kind.
type clusterTrustBundle struct{ *renderer }

// current returns what the policy's sources hold.
func (r *clusterTrustBundle) current() ([]*x509.Certificate, bool) { return r.readSources(), true }

// slots yields the target ClusterTrustBundle's spec.trustBundle.
func (r *clusterTrustBundle) slots() iter.Seq[slot] {
	return func(yield func(slot) bool) {
		key := kube.Key{Kind: policy.TargetClusterTrustBundle, Name: r.bundle.Target.Name}
		node := r.env.Index.GetIn(ClusterTrustBundleGroup, key)
		s := slot{key: key, ref: kube.Ref{APIVersion: ClusterTrustBundleVersion, Kind: key.Kind, Name: key.Name}, node: node,
			memKey: "spec.trustBundle", field: "spec.trustBundle", limit: MaxValueBytes, limitWhy: trustBundleLimit}
		if node != nil {
			s.ref = kube.RefOf(node)
			var ok bool
			if s.parent, s.previous, ok = r.readClusterTrustBundle(node); !ok {
				return
			}
		}
		yield(s)
	}
}

// write writes the bundle into spec.trustBundle, creating the
// ClusterTrustBundle (in v1beta1) when absent.
func (r *clusterTrustBundle) write(s slot, res *Target, pem []byte) (bool, bool) {
	if !r.allCAs(s.ref, *res) {
		return false, false
	}
	spec := s.parent
	if s.node == nil {
		node := r.newObject(ClusterTrustBundleVersion, s.key)
		r.created(res, node, s.key)
		var err error
		if spec, err = node.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec")); err != nil {
			r.errorf(s.ref, "spec", "bundle %q: %v", r.bundle.Name, err)
			return false, false
		}
		if signer := r.bundle.Target.SignerName; signer != "" {
			_ = spec.PipeE(yaml.SetField("signerName", yaml.NewStringRNode(signer)))
		}
	}
	changed, err := setString(spec, "trustBundle", string(pem))
	if err != nil {
		r.errorf(s.ref, s.field, "bundle %q: %s: set spec.trustBundle: %v", r.bundle.Name, s.ref, err)
		return false, false
	}
	return changed, true
}

// readClusterTrustBundle checks an existing ClusterTrustBundle and returns
// its spec and the certificates of spec.trustBundle. Its signerName must
// be the policy's: the API refuses to change it.
func (r *clusterTrustBundle) readClusterTrustBundle(node *yaml.RNode) (*yaml.RNode, []*x509.Certificate, bool) {
	ref := kube.RefOf(node)
	if v := node.GetApiVersion(); v != ClusterTrustBundleVersion && v != clusterTrustBundleAlpha {
		r.errorf(ref, "apiVersion", "bundle %q: %s has apiVersion %s; rotate-certs writes %s and %s ClusterTrustBundles", r.bundle.Name, ref, kube.Quote(v), ClusterTrustBundleVersion, clusterTrustBundleAlpha)
		return nil, nil, false
	}
	spec, err := mapping(node, "spec")
	if err != nil {
		r.errorf(ref, "spec", "bundle %q: %s spec %v", r.bundle.Name, ref, err)
		return nil, nil, false
	}
	if spec == nil {
		if spec, err = node.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec")); err != nil {
			r.errorf(ref, "spec", "bundle %q: %v", r.bundle.Name, err)
			return nil, nil, false
		}
	}
	signer, _, err := scalar(spec, "signerName")
	if err != nil {
		r.errorf(ref, "spec.signerName", "bundle %q: %s spec.signerName %v", r.bundle.Name, ref, err)
		return nil, nil, false
	}
	if want := r.bundle.Target.SignerName; signer != want {
		r.errorf(ref, "spec.signerName", "bundle %q: %s has spec.signerName %s but the policy's target.signerName is %q; the API server refuses to change a signerName - make them agree (a ClusterTrustBundle for another signer is a new object, with a name of its own)",
			r.bundle.Name, ref, kube.Quote(signer), want)
		return nil, nil, false
	}
	text, _, err := scalar(spec, "trustBundle")
	if err != nil {
		r.errorf(ref, "spec.trustBundle", "bundle %q: %s spec.trustBundle %v", r.bundle.Name, ref, err)
		return nil, nil, false
	}
	certs, ok := r.readHeld(ref, "spec.trustBundle", []byte(text))
	return spec, certs, ok
}

// allCAs fails when the rendered bundle holds a certificate that is not a
// CA: the API server accepts only CA certificates (basic constraints with
// the CA bit) in a ClusterTrustBundle.
func (r *clusterTrustBundle) allCAs(ref kube.Ref, t Target) bool {
	var leaves []string
	for _, c := range t.Outcome.Certificates() {
		if !c.IsCA || !c.BasicConstraintsValid {
			leaves = append(leaves, pki.Describe(c))
		}
	}
	if len(leaves) == 0 {
		return true
	}
	r.errorf(ref, "spec.trustBundle", "bundle %q: %s would hold %s, which %s not a CA certificate; the API server accepts only CA certificates in a ClusterTrustBundle - point the source at the issuing CA",
		r.bundle.Name, ref, strings.Join(leaves, ", "), map[bool]string{true: "is", false: "are"}[len(leaves) == 1])
	return false
}
