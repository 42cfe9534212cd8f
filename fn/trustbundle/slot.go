package trustbundle

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// slot is one value a bundle writes: a data key of a Secret or ConfigMap,
// a caBundle field the API server reads, a ClusterTrustBundle's
// spec.trustBundle, or the previous CAs of a trust-manager Bundle. Each is
// a target of its own: what it holds is its previous state (trust bundle
// rule 2), and the memory annotations of its object say when each of its
// previous CAs retired.
type slot struct {
	// key and ref identify the object; ref carries its file.
	key kube.Key
	ref kube.Ref
	// node is the object, nil when it is absent and will be created.
	node *yaml.RNode
	// memKey is the data key or field path that qualifies the slot's
	// lines in the memory annotations of an object written in several
	// places.
	memKey string
	// field is the field path of the value, for results.
	field string
	// previous is what the value holds now.
	previous []*x509.Certificate
	// limit is the largest rendered PEM the value may take, and limitWhy
	// says whose limit it is.
	limit    int
	limitWhy string
	// unknown, when set, says why the object has no previous state to
	// carry (default: the value held no certificate).
	unknown string
	// seen is true for a trust-manager Bundle, whose object also keeps
	// the seen annotation.
	seen bool
}

// dataName names the slot's value in messages about its memory: its
// field, or for a trust-manager Bundle rotate-certs' inLine source.
func (s slot) dataName() string {
	if s.seen {
		return "the inLine source of rotate-certs (" + s.field + ")"
	}
	return s.field
}

// noState ends the warning about a target that had nothing to carry over.
const noState = "; there was no previous state to carry over, so peers that still use a leaf of an older CA are not covered - commit the rendered target so the next render remembers it"

// merge applies the trust bundle rules to one slot: it reads the slot's
// memory, merges it with current, reports the merge's decisions and
// returns the target, not yet written, with the PEM to write. It reports
// a slot that had no previous state.
func (r *renderer) merge(s slot, current []*x509.Certificate) (Target, []byte, bool) {
	var mem anchors.Memory
	stateful := false
	if s.node != nil {
		var ok bool
		if mem, stateful, ok = r.readMemory(s, current); !ok {
			return Target{}, nil, false
		}
	}
	opts := r.options()
	if r.env.Hold != nil && s.node != nil && !opts.Copy {
		opts.HoldUntil, _ = r.env.Hold(r.bundle, s.node)
	}
	outcome, err := anchors.MergeTarget(current, mem, r.env.Chains, opts, r.env.Now)
	if err != nil {
		r.errorf(r.env.PolicyRef, r.path+".sources", "bundle %q: %v", r.bundle.Name, err)
		return Target{}, nil, false
	}
	r.reportDecisions(s.ref, s.field, outcome)
	r.reportRestored(s, outcome.Restored)
	pem := outcome.PEM()
	if len(pem) > s.limit {
		r.errorf(s.ref, s.field,
			"bundle %q: the rendered bundle of %d certificates is %d bytes, more than the %d bytes %s; the API server would reject it - trust fewer certificates or lower retain.maxPrevious",
			r.bundle.Name, len(outcome.Current)+len(outcome.Previous), len(pem), s.limit, s.limitWhy)
		return Target{}, nil, false
	}
	sum := sha256.Sum256(pem)
	t := Target{Key: s.key, Node: s.node, Hash: "sha256:" + hex.EncodeToString(sum[:]), Outcome: outcome, bundle: r.bundle.Name,
		rotatedAt: outcome.LatestNotBefore(), record: outcome.Record(), remembered: anchors.Canonical(outcome.Remembered),
		metadata: r.bundle.Target.Metadata, field: s.field, keys: []string{s.memKey}}
	switch {
	case s.node == nil:
		// The caller creates the object and says so.
	case !stateful:
		why := s.unknown
		if why == "" {
			why = "held no certificate in " + s.field
		}
		r.add(s.ref.Result(framework.Warning, s.field,
			fmt.Sprintf("bundle %q: target %s %s%s", r.bundle.Name, s.key, why, noState)))
	}
	return t, pem, true
}

// complete finishes a written target: whether the render changed it and
// its trust, the warnings that follow from what it now holds, and its info
// result (Finish completes the word "updated" or "unchanged").
func (r *renderer) complete(t *Target, s slot, dataChanged bool) {
	t.dataChanged = dataChanged
	t.Changed = dataChanged || t.Created
	t.TrustChanged = t.Created || !sameSet(s.previous, t.Outcome.Certificates())
	ref := kube.RefOf(t.Node)
	r.warnNoneValid(ref, t.field, t.Outcome)
	o := t.Outcome
	t.summaryText = fmt.Sprintf("bundle %q: %d certificate(s): %d current, %d previous; ",
		r.bundle.Name, len(o.Current)+len(o.Previous), len(o.Current), len(o.Previous))
	t.summary = ref.Result(framework.Info, "", t.summaryText+changeWord(*t))
	r.add(t.summary)
}

// created reports a target object that was not in the input.
func (r *renderer) created(node *yaml.RNode, key kube.Key) {
	r.add(kube.RefOf(node).Result(framework.Warning, "",
		fmt.Sprintf("bundle %q: target %s was not in the input and was created%s", r.bundle.Name, key, noState)))
}
