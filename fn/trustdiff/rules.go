package trustdiff

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
)

// Whys a policy's rules give that its render's explanation of HEAD cannot:
// the explanation is of HEAD alone, and says why each target holds each
// CA. A policy's source is no target, yet every CA it holds is current in
// a source (a source staging the next CA: why source). And a CA restored
// on a switch from Copy back to Bundle mode came from the memory BASE
// held (rotate-certs.dev/previous), which the render that read it back
// removed: HEAD's explanation sees a CA its data already holds (carried),
// and BASE's data did not hold it.

// policySources records the values bundle tb of the package in dir reads
// as its sources: a Secret or ConfigMap key of the package (the render
// reads them from its input); and, for a bundle whose target is a
// trust-manager Bundle, the trust namespace its sources are read in.
func (b *builder) policySources(dir string, tb policy.TrustBundle) {
	if tb.Target.Kind == kube.TargetBundle {
		if b.trustNS == nil {
			b.trustNS = map[string]string{}
		}
		b.trustNS[dir+"\x00"+tb.Target.Name] = tb.Target.TrustNamespace
	}
	for _, s := range tb.Sources {
		kind, ref, key := "Secret", s.Secret, "ca.crt"
		if s.ConfigMap != nil {
			kind, ref, key = "ConfigMap", s.ConfigMap, "ca-bundle.crt"
		}
		if ref == nil {
			continue // inline PEM: the policy itself
		}
		if ref.Key != "" {
			key = ref.Key
		}
		if b.sourceOf == nil {
			b.sourceOf = map[string]string{}
		}
		b.sourceOf[sourceKey(dir, kind, ref.Namespace, ref.Name, "data."+key)] = kube.Safe(tb.Name)
	}
}

// sourceKey is the key of policySources' record: the package directory,
// and the object and value (as valueField writes it).
func sourceKey(dir, kind, namespace, name, field string) string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s", dir, kind, namespace, name, field)
}

// byRule is CA ca of trust object o (bo on BASE's side, nil when none,
// for a CA o's data holds at HEAD) with the why the rules give it: source
// for a CA of a policy's source that nothing else explained (unexplained,
// or a CA its data already held: carried); restored for a CA o's data did
// not hold at BASE that a policy's render carries at HEAD and that BASE's
// Copy-mode memory held.
func byRule(ca CA, bo, o *TrustObject) CA {
	plain := CA{Subject: ca.Subject, SHA256: ca.SHA256, NotAfter: ca.NotAfter}
	switch r := o.reasons[ca.SHA256]; {
	case bo != nil && !shas(bo)[ca.SHA256] && (r.why == WhyCarried || r.why == WhyRestored) && remembers(bo, ca.SHA256):
		plain.Why, plain.Source = WhyRestored, "from "+trustbundle.PreviousAnnotation+" at BASE"
		return plain
	case o.sourceOf != "" && (ca.Why == WhyUnexplained || ca.Why == WhyCarried):
		plain.Why, plain.Source = WhySource, "a source of bundle "+o.sourceOf
		return plain
	}
	return ca
}

// remembers reports whether o's Copy-mode memory (its previous
// annotation) holds CA s.
func remembers(o *TrustObject, s string) bool {
	for _, c := range certsIn(o.memory[trustbundle.PreviousAnnotation]).List() {
		if sha(c) == s {
			return true
		}
	}
	return false
}
