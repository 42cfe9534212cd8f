// Package trustdiff says what a change does to trust: it compares the
// models of two trees (Model: the trust objects of each, what each holds
// and why, who reads it, the certificates presented, the workloads, Cluster
// API rollouts, alert rules and policies) and returns the CAs added,
// removed and kept per trust object, the certificates the change breaks,
// the trust it plants, and the rolls, rollouts, alerts and policy changes
// in words (Result). Compare is pure: no I/O, no YAML; build.go maps
// resources onto a Model, output.go writes a Result.
package trustdiff

import (
	"crypto/x509"
	"strconv"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/pki"
)

// schemaVersion is the version of the JSON output.
const schemaVersion = "rotate-certs.dev/diff/v1"

// Resource names an object of a tree, as the JSON output shows it.
type Resource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// File is the file the object was read from, relative to the top of
	// the tree; for an object a kustomization built, the file it came
	// from (its resource file, or the kustomization whose generator made
	// it).
	File string `json:"file,omitempty"`
	// Kustomization is, for an object a kustomization built, the
	// kustomization file that was built.
	Kustomization string `json:"kustomization,omitempty"`
	// generated is, for a generated object whose name kustomize suffixed
	// with the hash of its content, the name before the suffix.
	generated string
	// place tells apart objects that share their identity's other parts
	// (identity.go); "" for an object that is the only one of its name.
	place string
}

// String names the object for tables: "Secret ns/name".
func (r Resource) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Why words: why a trust object holds a CA.
const (
	// WhySource: current in a source - a policy's, or, without a policy,
	// another object of the tree that holds it.
	WhySource = "source"
	// WhyCarried: a previous CA the object's own data already held.
	WhyCarried = "carried"
	// WhyRestored: restored from Copy-mode memory (rotate-certs.dev/previous).
	WhyRestored = "restored"
	// WhyUnexplained: in data, no source holds it and no rule put it there.
	WhyUnexplained = "unexplained"
)

// reason is why a policy's render holds a CA in a trust object: a Why word
// and, for a source, where it was read.
type reason struct {
	why    string
	source string
}

// TrustObject is one value that holds trust: a Secret or ConfigMap key, a
// caBundle field, a ClusterTrustBundle's spec.trustBundle, a trust-manager
// Bundle's inLine source.
type TrustObject struct {
	Resource Resource
	Field    string
	// Bundle is the policy bundle that renders it, "" when none does.
	Bundle string
	// Package is the directory of the package the object is in (below
	// the top of the tree), "" when it is in none; pkg is the directory
	// as read.
	Package string
	pkg     string
	// domain is the trust domain of Bundle, "" when it names none.
	domain string
	// cas are the CAs it holds, in data order.
	cas []*x509.Certificate
	// reasons are, by SHA-256, why a policy's render holds each CA;
	// empty when no policy renders the object.
	reasons map[string]reason
	// Readers are what reads it.
	Readers []Reader
	// memory are the object's memory annotations (retired, unused,
	// previous, seen) by name, as written.
	memory map[string]string
	// id is key(), computed once: the diff of a fleet repository asks it
	// for every certificate that may chain to the object.
	id string
	// sourceOf is the policy bundle that reads the object as a source, ""
	// when none does (rules.go).
	sourceOf string
	// derived are, by SHA-256, the CAs a trust-manager Bundle holds only
	// because a Secret or ConfigMap it reads does (trustmanager.go): that
	// value holds them, the Bundle is no other holder of them.
	derived map[string]bool
	// keyPair is true for the ca.crt of a CA's own key pair: a Secret of
	// type kubernetes.io/tls whose tls.crt is that one self-signed CA
	// (provenance.go, ownKeyPair).
	keyPair bool
}

// key is the identity of a trust object across the two trees.
func (t *TrustObject) key() string {
	if t.id == "" {
		t.id = t.Resource.id() + "\x00" + valueField(t.Resource, t.Field)
	}
	return t.id
}

// valueField is field with a Secret's or ConfigMap's data, stringData and
// binaryData made one ("data.ca.crt"): where a value is written is no
// change.
func valueField(r Resource, field string) string {
	if r.Kind != "Secret" && r.Kind != "ConfigMap" {
		return field
	}
	for _, p := range []string{"stringData.", "binaryData."} {
		if rest, ok := strings.CutPrefix(field, p); ok {
			return "data." + rest
		}
	}
	return field
}

// Reader is what reads a trust object, as restart.Readers says: a
// workload, a Gateway API or Envoy Gateway object, or the API server for
// a caBundle (the object that holds it is named). It is a restart.Reader
// in the output's terms; the output calls readers "consumers" (the JSON
// key and the table's words).
type Reader struct {
	Resource Resource `json:"resource"`
	// Via says how it reads the trust (restart.Via: "volume", "subPath
	// mount", "env", "envFrom", "injection at admission",
	// "restart.workloads", "caCertificateRefs", "API server").
	Via string `json:"via"`
	// Once is true when it reads the trust once and keeps it until it is
	// restarted (restart.Reader.Once, the rule render rolls by): env,
	// envFrom, a subPath mount, injection at admission, a whole volume
	// without rotate-certs.dev/reload: hot, a workload restart.workloads
	// names, or one annotated reload: never.
	Once bool `json:"readsOnce,omitempty"`
	// Never is true when nothing rolls it (restart.Reader.Never): a
	// workload annotated rotate-certs.dev/reload: never, a Pod or a
	// ReplicaSet.
	Never bool `json:"-"`
}

// cert is a certificate the tree presents: a leaf, or an issuer or
// intermediate, outside the trust objects, with where it is held.
type cert struct {
	resource Resource
	key      string
	cert     *x509.Certificate
	// pkgDir is the directory of the package it is in (below the top of
	// the tree), "" when it is in none.
	pkgDir string
	// pos is its position among the certificates of its value: a value
	// holds a chain (a leaf, then its issuer), and a place's certificate
	// at BASE is the one at the same position.
	pos int
}

// at is the identity of the place a certificate is held across the two
// trees.
func (c cert) at() string { return c.resource.id() + "\x00" + valueField(c.resource, c.key) }

// slot is the identity of the place and position of a certificate across
// the two trees: the leaf of a chain is paired with the leaf it replaced,
// not with the issuer after it.
func (c cert) slot() string { return c.at() + "\x00" + strconv.Itoa(c.pos) }

// holder is an object that holds a CA outside trust objects' data (a CA
// Secret's tls.crt, a snapshot), which explains the CA without a policy.
type holder struct {
	resource Resource
	key      string
}

// workload is a workload of the tree and a digest of its pod template: a
// change of the digest rolls it.
type workload struct {
	resource Resource
	template string
	// wave is the restart wave the policy's render puts it in, "" when
	// the bundle rolls in one step.
	wave string
	// replaces is its kind's roll behaviour (policy.WorkloadKind's
	// ReplacesPods): a change of its template replaces its running pods.
	replaces bool
}

// rollout is a Cluster API object whose machine template a change rolls
// out, and a digest of what rolls it.
type rollout struct {
	resource Resource
	digest   string
}

// alert is one alert rule of a PrometheusRule.
type alert struct {
	resource Resource
	name     string
}

// policySpec is a RotationPolicy as the diff words its changes.
type policySpec struct {
	resource Resource
	// bundles are its trust bundles by name.
	bundles map[string]bundleSpec
}

// bundleSpec is what of a bundle the diff words.
type bundleSpec struct {
	mode   string
	retain string
	// retainFor is retain.for (0 when unset).
	retainFor time.Duration
	sources   []string
	target    string
}

// Model is what diff knows of one side of a change: what the manifests
// of one tree say of trust (resio.Tree is the tree's files). Other
// packages read its Trust and Problems; the rest is Compare's.
type Model struct {
	Trust []*TrustObject
	// Problems are what could not be read, one each (scrubbed).
	Problems []Problem

	// certs are the certificates presented (not self-signed), in tree
	// order.
	certs []cert
	// intermediates are every CA of the tree that is not self-signed,
	// for chains.
	intermediates []*x509.Certificate
	// holders are, by SHA-256, the objects that hold a CA outside trust
	// objects.
	holders   map[string][]holder
	workloads []workload
	rollouts  []rollout
	alerts    []alert
	policies  []policySpec
	// domains are, by package directory (as cert.pkgDir names it), the
	// trust domains its policies' bundles name.
	domains map[string]map[string]bool
	// certFiles are the certificate and key files no build reads, by
	// path below the top, each with the digest of its content.
	certFiles map[string]string
	// keys are the values that hold private key material where no key
	// belongs (keyPlace).
	keys []keyPlace

	// presenters are, by Resource.id of each object that holds a
	// certificate of certs, what reads it: who keeps presenting a
	// certificate it held.
	presenters map[string][]Reader
	// sourced are the CAs some trust object holds because a policy reads
	// them from a source (reasons' WhySource), made at the first ask
	// (current): the comparison asks once per memory record, and a fleet
	// has thousands of trust objects.
	sourced map[string]bool

	byResource map[string][]cert         // certs by Resource.id, made when first asked
	bySHA      map[string][]*TrustObject // Trust by the CAs they hold, made when first asked
}

// Problem is something of a tree that could not be read.
type Problem struct {
	// File is the file it is in, below the top of the tree; "" when it
	// is in none.
	File string
	// Message says what, naming the file or object (scrubbed).
	Message string
}

// Incomplete is a file a diff could read on neither side and that the
// change leaves as it was: the verdict stands for the rest of the tree,
// and says nothing of what the file holds.
type Incomplete struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// sha is the hex SHA-256 of c.
func sha(c *x509.Certificate) string { return pki.FingerprintOf(c).String() }
