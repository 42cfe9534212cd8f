package trustbundle

import (
	"crypto/x509"
	"fmt"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxValueBytes is the largest source, existing target or rendered bundle
// value a bundle accepts: 1 MiB, the most the Kubernetes API server stores
// in one Secret or ConfigMap. A larger value could never be applied, and
// the cap bounds the parsing work one value can cause.
const maxValueBytes = 1 << 20

// secretLimit says whose limit maxValueBytes is.
const secretLimit = "(1 MiB) a Kubernetes Secret or ConfigMap can hold"

// tooLarge describes a value over maxValueBytes.
func tooLarge(n int) string {
	return fmt.Sprintf("%d bytes, more than the %d bytes %s", n, maxValueBytes, secretLimit)
}

// Env is what rendering needs from the run.
type Env struct {
	// Index finds input objects; created targets are added to it. Its
	// target-kind table (kube.Index.Targets) is the one the render reads:
	// a row's scope keys the objects, and its store picks the renderer.
	Index *kube.Index
	// Now is the render time.
	Now time.Time
	// Chains are the certificates of the input, indexed once per run
	// (anchors.NewChainIndex, with the run's memoized signature check) and
	// shared by every bundle and target.
	Chains *anchors.ChainIndex
	// PolicyRef is the policy, for results about its fields.
	PolicyRef kube.Ref
	// Snapshots are the local-config Secrets and ConfigMaps, read as
	// sources when the input has no manifest of the object; nil: none.
	Snapshots *Snapshots
	// Certs parses the certificates of sources and existing targets, so
	// that a CA held by many targets is one *x509.Certificate and the
	// answers Chains remembers per certificate are found again;
	// nil parses every value anew (a nil *pki.Cache does).
	Certs *pki.Cache
	// PreviousHeldUntil says whether the existing target object node of bundle b must
	// keep every previous CA it holds, and until when at least: its
	// bundle rolls out restarts in waves that are not done (the restart
	// rules own the record). Nil: never.
	PreviousHeldUntil func(b *policy.TrustBundle, node *yaml.RNode) (time.Time, bool)
	// Domain returns what the run knows of trust domain name: nil, or a
	// view without its Domain, when it does not see the whole domain (a
	// nil Domain: never).
	Domain func(name string) *anchors.DomainView
}

// Target is one rendered target object.
type Target struct {
	// Key identifies the object.
	Key kube.Key
	// Node is the object (existing or created).
	Node *yaml.RNode
	// Hash is "sha256:" + hex of this bundle's rendered PEM: what a
	// workload reading the bundle's key depends on. The object's
	// bundle-hash annotation is the same value, unless other bundles write
	// other keys of the object (see Finish).
	Hash string
	// Created is true when the object was not in the input.
	Created bool
	// Changed is true when the render changed the object (set by Finish).
	Changed bool
	// TrustChanged is true when the set of certificates the target's
	// readers trust changed: the object was created, or what they held
	// before this render (slot.readBefore: the certificates the value
	// held; for a trust-manager Bundle before rotate-certs' first render,
	// what its sources hold) differs from the rendered ones as a set, by
	// SHA-256. Rewriting the same set in canonical form (another order,
	// CRLF, text around the PEM, a move out of binaryData, a caBundle
	// folded over lines) and adopting a correct target (adding only the
	// annotations, or a trust-manager Bundle's inLine source that pins
	// what its sources hold) are not trust changes, so they roll nobody.
	TrustChanged bool
	// Outcome is the merge: current and kept previous certificates.
	Outcome anchors.Outcome

	// What Finish needs to annotate the object and report the target.
	bundle      string
	field       string   // the field the PEM was written to, such as "data.ca.crt"
	keys        []string // every key the bundle writes: the PEM key, then truststores
	rotatedAt   time.Time
	dataChanged bool
	summary     *framework.Result // the target's info result, completed by Finish
	summaryText string
	// The target's memory (memory.go) and static metadata, written by
	// Finish over every bundle that writes the object.
	record     []anchors.Retirement
	unused     []anchors.Retirement
	remembered []*x509.Certificate
	metadata   *policy.TargetMetadata
}

// Where names the value the target holds the bundle in, for messages:
// "Secret ns/name data.ca.crt", "MutatingWebhookConfiguration x
// webhooks[name=a].clientConfig.caBundle".
func (t Target) Where() string { return t.Key.String() + " " + t.field }

// Field is the path of the field the target holds the bundle in
// ("data.ca.crt", "webhooks[name=a].clientConfig.caBundle").
func (t Target) Field() string { return t.field }

// Rendered is the outcome of one bundle.
type Rendered struct {
	// Name is the bundle's name.
	Name string
	// Targets are the values written, in order: the target object's (one
	// per namespace for a Secret or ConfigMap), then one per caBundle
	// field injected into.
	Targets []Target
	// Results are the bundle's results; any error means nothing may be
	// written out.
	Results framework.Results
	// options are the merge options the targets were rendered with.
	options anchors.Options
	// Sources says where each current certificate was read, by SHA-256:
	// "Secret ns/name data.ca.crt", or the policy's inline source.
	Sources map[pki.Fingerprint]string
}

type renderer struct {
	bundle  *policy.TrustBundle
	path    string
	env     Env
	results framework.Results
	// origins maps each current certificate to where it was read.
	origins map[pki.Fingerprint]origin
	// view is the bundle's trust domain as the run sees it; nil: none.
	view *anchors.DomainView
	// warned holds the messages already given, for warnings about an
	// object that several slots of the bundle read (the memory of an
	// object with several caBundle fields).
	warned map[string]bool
}

// warnOnce adds a warning at ref and field unless the same one was given.
func (r *renderer) warnOnce(ref kube.Ref, field, msg string) {
	key := ref.String() + "\x00" + field + "\x00" + msg
	if r.warned[key] {
		return
	}
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	r.warned[key] = true
	r.add(ref.Result(framework.Warning, field, msg))
}

func (r *renderer) add(res *framework.Result) { r.results = append(r.results, res) }

func (r *renderer) errorf(ref kube.Ref, field, format string, args ...any) {
	r.add(ref.Result(framework.Error, field, fmt.Sprintf(format, args...)))
}

func (r *renderer) failed() bool { return r.results.ExitCode() != 0 }

// Render renders bundle b (at policy field path path) into every target
// object. It edits existing targets in place and returns created ones in
// Rendered.Targets with Created set; the caller appends those to the
// output. The bundle-hash and rotated-at annotations cover every bundle
// that writes an object, so they are written once all bundles are
// rendered: the caller passes every bundle's Rendered to Finish.
func Render(b *policy.TrustBundle, path string, env Env) Rendered {
	r := &renderer{bundle: b, path: path, env: env}
	r.view = r.domainView()
	out := Rendered{Name: b.Name, options: r.options()}
	kinds := r.targetKinds()
	current, ok := kinds[0].current()
	if !ok {
		out.Results = r.results
		return out
	}
	r.reportExpiredSources(current)
	if r.failed() {
		out.Results = r.results
		return out
	}
	current = r.domainCurrent(current)
	for _, k := range kinds {
		out.Targets = append(out.Targets, r.renderKind(k, current)...)
	}
	if !b.HasObject() && len(b.Inject) == 0 && len(out.Targets) == 0 && !r.failed() {
		r.errorf(r.env.PolicyRef, path, "bundle %q writes nothing: it has no target and no inject list, and no object in the input is annotated %s: %s",
			b.Name, policy.InjectAnnotation, b.Name)
	}
	out.Results = r.results
	out.Sources = r.sources()
	return out
}

func (r *renderer) options() anchors.Options {
	o := anchors.Options{
		Copy:           r.bundle.Mode == policy.ModeCopy,
		MaxPrevious:    *r.bundle.Retain.MaxPrevious,
		ProtectIssuers: *r.bundle.Retain.ProtectIssuers,
		Domain:         r.view,
	}
	if r.bundle.Retain.For != nil {
		o.RetainFor = r.bundle.Retain.For.Duration
	}
	if r.bundle.Retain.DropUnusedAfter != nil {
		o.DropUnusedAfter = r.bundle.Retain.DropUnusedAfter.Duration
	}
	return o
}

// sources describes where each current certificate was read.
func (r *renderer) sources() map[pki.Fingerprint]string {
	out := make(map[pki.Fingerprint]string, len(r.origins))
	for fp, o := range r.origins {
		where := o.ref.String() + " " + o.field
		switch {
		case o.where != "":
			where = o.where
		case o.ref == r.env.PolicyRef:
			where = "the policy's " + o.field
		}
		out[fp] = where
	}
	return out
}
