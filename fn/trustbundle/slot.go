package trustbundle

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
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
	// keepsSeen is true for a slot whose object keeps the seen annotation
	// (SeenAnnotation: the CAs its sources held when it was last written),
	// which only a trust-manager Bundle's inLine source does.
	keepsSeen bool
	// readsSources is true when the value's readers hold what the
	// bundle's sources hold rather than previous: a trust-manager Bundle
	// without rotate-certs' inLine source yet, whose readers get from
	// trust-manager what its sources hold (readBefore).
	readsSources bool
	// parent is the mapping that holds the value when it is a plain field
	// (values.go): a ClusterTrustBundle's spec, the clientConfig or spec
	// that holds a caBundle.
	parent *yaml.RNode
}

// dataName names the slot's value in messages about its memory: its
// field, or for a trust-manager Bundle rotate-certs' inLine source.
func (s slot) dataName() string {
	if s.keepsSeen {
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
	if r.env.PreviousHeldUntil != nil && s.node != nil && !opts.Copy {
		opts.HoldUntil, _ = r.env.PreviousHeldUntil(r.bundle, s.node)
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
		rotatedAt: outcome.LatestNotBefore(), record: outcome.Record(), unused: outcome.UnusedRecord(), remembered: anchors.Canonical(outcome.Remembered),
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
	t.TrustChanged = t.Created || !sameSet(s.readBefore(t.Outcome), t.Outcome.Certificates())
	ref := kube.RefOf(t.Node)
	r.warnNoneValid(ref, t.field, t.Outcome)
	o := t.Outcome
	t.summaryText = fmt.Sprintf("bundle %q: %d certificate(s): %d current, %d previous; ",
		r.bundle.Name, len(o.Current)+len(o.Previous), len(o.Current), len(o.Previous))
	t.summary = ref.Result(framework.Info, "", t.summaryText+changeWord(*t))
	r.add(t.summary)
}

// readBefore returns the CAs the readers of the slot's value held before
// this render, which its trust changed against: what the value holds
// (previous). A trust-manager Bundle distributes the union of its
// sources, so before rotate-certs' first render its readers hold what the
// sources hold: the current CAs of o (trust-manager also copies an expired
// source CA, which rule 1 leaves out of o; it is in what the readers hold
// before and after alike). Adopting such a Bundle pins exactly those CAs
// and changes no reader's trust, unless the render adds a previous CA.
func (s slot) readBefore(o anchors.Outcome) []*x509.Certificate {
	if s.readsSources {
		return o.Current
	}
	return s.previous
}

func changeWord(t Target) string {
	switch {
	case t.Created:
		return "created"
	case t.Changed:
		return "updated"
	default:
		return "unchanged"
	}
}

// sameSet reports whether a and b hold the same certificates, ignoring
// order and repeats: whether a target's trust is unchanged.
func sameSet(a, b []*x509.Certificate) bool {
	sa, sb := pki.NewSet(a...), pki.NewSet(b...)
	if sa.Len() != sb.Len() {
		return false
	}
	for _, c := range sb.List() {
		if !sa.Has(c) {
			return false
		}
	}
	return true
}

// warnNoneValid warns when no certificate of the rendered bundle is valid
// at render time: only not-yet-valid CAs are left (a pre-distributed next
// CA rendered alone, in Copy mode or into a new target), so every handshake
// that relies on the bundle fails until the earliest of them becomes valid.
func (r *renderer) warnNoneValid(ref kube.Ref, field string, o anchors.Outcome) {
	certs := o.Certificates()
	var earliest *x509.Certificate
	for _, c := range certs {
		if !r.env.Now.Before(c.NotBefore) && !pki.Expired(c, r.env.Now) {
			return
		}
		if earliest == nil || c.NotBefore.Before(earliest.NotBefore) {
			earliest = c
		}
	}
	if earliest == nil {
		return
	}
	r.add(ref.Result(framework.Warning, field, fmt.Sprintf(
		"bundle %q: no certificate in the bundle is valid now: %d not yet valid, the earliest %s from %s; every TLS handshake that relies on this bundle fails until then - keep the CA that signs today's certificates in the sources until the new one is valid",
		r.bundle.Name, len(certs), pki.Describe(earliest), earliest.NotBefore.UTC().Format(time.RFC3339))))
}

// maxNamed caps how many certificates one result lists.
const maxNamed = 5

// named lists certificates as results name them: their subject and where
// each is held, the first maxNamed of them.
func named(held []anchors.Held) string {
	var where []string
	for i, h := range held {
		if i == maxNamed {
			where = append(where, fmt.Sprintf("and %d more", len(held)-maxNamed))
			break
		}
		where = append(where, fmt.Sprintf("%q in %s", pki.Subject(h.Cert), h.Where))
	}
	return strings.Join(where, ", ")
}

// reportDecisions turns the merge into results on the target ref, at
// field: the current certificates it dropped, and the verdict of every
// previous CA.
func (r *renderer) reportDecisions(ref kube.Ref, field string, o anchors.Outcome) {
	// An expired current certificate is reported once per bundle, at its
	// source (reportExpiredSources).
	for _, f := range o.Fates {
		c := pki.Describe(f.Cert)
		var sev framework.Severity = framework.Info
		var msg string
		switch f.State {
		case anchors.FateProtected:
			sev = framework.Warning
			msg = fmt.Sprintf("previous CA %s is kept beyond the retain policy because valid certificate(s) still chain to it: %s; re-issue them from a current CA before the old CA can go (or set retain.protectIssuers: false)",
				c, named(f.Needed()))
		case anchors.FateRemembered:
			msg = fmt.Sprintf("previous CA %s is not in the bundle (Copy mode); annotation %s keeps it, so that switching back to Bundle mode restores it", c, PreviousAnnotation)
		case anchors.FateDropped:
			msg = fmt.Sprintf("dropped previous CA %s (%s)", c, f.Reason)
			if len(f.Dependents) > 0 {
				sev = framework.Warning
				msg += fmt.Sprintf(", although valid certificate(s) still chain to it: %s; peers that trust only this bundle reject them - re-issue them from a current CA now", named(f.Dependents))
			}
		default:
			msg = fmt.Sprintf("previous CA %s, retired %s: %s", c, f.RetiredAt.Format(time.RFC3339), f.Verdict)
			if deps := f.Needed(); len(deps) > 0 {
				msg += fmt.Sprintf("; %d certificate(s) chain to it: %s", len(deps), named(deps))
			} else if f.UnusedSince.IsZero() {
				msg += "; nothing in the input chains to it"
			} else {
				msg += "; nothing in the input has chained to it since " + f.UnusedSince.Format(time.RFC3339) + ", which retain.dropUnusedAfter counts from"
			}
		}
		r.add(ref.Result(sev, field, fmt.Sprintf("bundle %q: %s", r.bundle.Name, msg)))
	}
}
