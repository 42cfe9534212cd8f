// Package trustbundle maps a policy's trust bundles onto the input: it reads
// the sources and the existing targets from RNodes, hands plain
// certificates to package anchors, and writes the result back in place by
// the write-back rule of writeback.go (data, stringData or binaryData). It
// is the YAML side of the trust bundle rules of docs/design/contract.md;
// the rules themselves live in package anchors.
package trustbundle

import (
	"crypto/x509"
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readSources returns the current certificates of b in source order.
func (r *renderer) readSources() []*x509.Certificate {
	var out []*x509.Certificate
	for i, s := range r.bundle.Sources {
		field := fmt.Sprintf("%s.sources[%d]", r.path, i)
		if s.Inline != "" {
			if len(s.Inline) > maxValueBytes {
				r.errorf(r.env.PolicyRef, field+".inline", "bundle %q: inline source is %s", r.bundle.Name, tooLarge(len(s.Inline)))
				continue
			}
			d, err := r.env.Certs.DecodePEM([]byte(s.Inline))
			if err != nil {
				r.errorf(r.env.PolicyRef, field+".inline", "bundle %q: inline source: %v", r.bundle.Name, err)
				continue
			}
			r.skipped(r.env.PolicyRef, field+".inline", d)
			r.warnLeaves(r.env.PolicyRef, field+".inline", "inline source "+field, d.Certificates)
			r.from(r.env.PolicyRef, field+".inline", d.Certificates)
			out = append(out, d.Certificates...)
			continue
		}
		out = append(out, r.readObjectSource(s, field)...)
	}
	return out
}

// readObjectSource reads a Secret or ConfigMap source. A source that is
// absent or empty is an error, or an info when it is optional (a next CA
// that is not issued yet). A source that is there but cannot be read
// (invalid base64, no PEM, no certificate, a malformed object) is an
// error, or a warning when it is optional: it is skipped as
// docs/design/contract.md, Trust bundle rules, rule 1 says, but such data is almost always a mistake - the wrong key, a
// truncated paste - that would otherwise go unnoticed until the CA it
// should carry is needed.
func (r *renderer) readObjectSource(s policy.Source, field string) []*x509.Certificate {
	ref := s.Ref()
	key := kube.Key{Kind: s.Kind(), Namespace: ref.Namespace, Name: ref.Name}
	node := r.sourceObject(key, field)
	if node == nil {
		// Only the core group counts: an example.com/v1 Secret of this
		// name is another object. The message does not mention one, since
		// the fast path of function mode never parses such objects and
		// both paths must say the same.
		what := "is not in the input"
		if ref.Optional {
			r.add(r.env.PolicyRef.Result(framework.Info, field,
				fmt.Sprintf("bundle %q: optional source %s %s; skipped", r.bundle.Name, key, what)))
			return nil
		}
		r.errorf(r.env.PolicyRef, field, "bundle %q: source %s %s (mark it optional: true if it may be absent)%s%s", r.bundle.Name, key, what, r.nearest(key), SnapshotHint(key))
		return nil
	}
	obj := kube.RefOf(node)
	if v := node.GetApiVersion(); v != "v1" {
		r.unreadable(obj, "apiVersion", ref.Optional, fmt.Sprintf(" has apiVersion %s; a %s source must be a core v1 %s", kube.Quote(v), key.Kind, key.Kind))
		return nil
	}
	if kube.IsSOPSEncrypted(node) {
		// Not "unparsable data" but a pipeline in the wrong order: it
		// fails even when optional, or the CA it carries is never trusted.
		r.errorf(obj, "sops", "bundle %q: source %s is SOPS-encrypted; decrypt it before rotate-certs runs (e.g. with ksops or Flux decryption), the function cannot read ciphertext", r.bundle.Name, obj)
		return nil
	}
	v, found, err := kube.Lookup(node, ref.Key)
	if err != nil {
		r.unreadable(obj, kube.FieldOf(err), ref.Optional, ": "+err.Error())
		return nil
	}
	if !found || len(strings.TrimSpace(string(v.Bytes))) == 0 {
		what := "has no key " + ref.Key
		if found {
			what = "has an empty " + v.Field
		}
		if ref.Optional {
			r.add(obj.Result(framework.Info, dataFieldOf(node, ref.Key),
				fmt.Sprintf("bundle %q: optional source %s %s; skipped", r.bundle.Name, obj, what)))
			return nil
		}
		if !found {
			what += "; it has " + kube.KeyList(kube.Keys(node))
		}
		r.errorf(obj, dataFieldOf(node, ref.Key), "bundle %q: source %s %s", r.bundle.Name, obj, what)
		return nil
	}
	if len(v.Bytes) > maxValueBytes {
		r.unreadable(obj, v.Field, ref.Optional, fmt.Sprintf(" %s is %s", v.Field, tooLarge(len(v.Bytes))))
		return nil
	}
	d, err := r.env.Certs.DecodePEM(v.Bytes)
	if err != nil {
		r.unreadable(obj, v.Field, ref.Optional, fmt.Sprintf(" %s is not PEM certificate data: %v", v.Field, err))
		return nil
	}
	r.skipped(obj, v.Field, d)
	if len(d.Certificates) == 0 {
		r.unreadable(obj, v.Field, ref.Optional, " "+v.Field+" holds no certificate")
		return nil
	}
	r.warnLeaves(obj, v.Field, fmt.Sprintf("source %s %s", obj, v.Field), d.Certificates)
	r.from(obj, v.Field, d.Certificates)
	return d.Certificates
}

// nearest names the object of the source's kind nearest to key - the same
// name in another namespace, or a name a few edits away - and the keys it
// has: "; the nearest is Secret ns/name (keys ca.crt, tls.crt)", or "".
func (r *renderer) nearest(key kube.Key) string {
	var have []kube.Key
	nodes := map[kube.Key]*yaml.RNode{}
	for _, n := range append(r.env.Index.Kind(key.Kind), r.env.Snapshots.kind(key.Kind)...) {
		k := kube.KeyOf(n)
		if _, dup := nodes[k]; !dup {
			nodes[k] = n
			have = append(have, k)
		}
	}
	k, ok := kube.Nearest(key, have)
	if !ok {
		return ""
	}
	return fmt.Sprintf("; the nearest is %s (%s)", k, kube.KeyList(kube.Keys(nodes[k])))
}

// SnapshotHint tells how to bring an object that lives only in the
// cluster into the input.
func SnapshotHint(key kube.Key) string {
	if !kube.ValidObjectName(key.Name) || (key.Namespace != "" && !kube.ValidDNSLabel(key.Namespace)) {
		return "" // no command line for a name no object can have
	}
	ns := ""
	if key.Namespace != "" {
		ns = " -n " + key.Namespace
	}
	return fmt.Sprintf("; if it lives only in the cluster, commit a snapshot of it: kubectl get %s %s%s -o yaml | rotate-certs snapshot - > %s.yaml",
		strings.ToLower(key.Kind), key.Name, ns, key.Name)
}

// unreadable reports a source object that is in the input but cannot be
// read: an error, or for an optional source a warning that it is skipped.
// problem follows the object's name: " data.ca.crt is ..." or ": ...".
func (r *renderer) unreadable(obj kube.Ref, field string, optional bool, problem string) {
	if !optional {
		r.errorf(obj, field, "bundle %q: source %s%s", r.bundle.Name, obj, problem)
		return
	}
	r.add(obj.Result(framework.Warning, field, fmt.Sprintf(
		"bundle %q: optional source %s%s; skipped - an optional source may be absent or empty, but data that cannot be read is likely a mistake",
		r.bundle.Name, obj, problem)))
}

// warnLeaves warns about each end-entity (non-CA) certificate of a source.
// It is trusted as given - a self-signed certificate pinned on purpose is
// legitimate - but far more often the source points at a tls.crt where
// it meant the ca.crt beside it, and the bundle then breaks at that
// leaf's next re-issue.
func (r *renderer) warnLeaves(ref kube.Ref, field, what string, certs []*x509.Certificate) {
	for _, c := range certs {
		if pki.IsCA(c) {
			continue
		}
		r.add(ref.Result(framework.Warning, field, fmt.Sprintf(
			"bundle %q: %s holds %s, which is not a CA certificate; it is trusted as given, but trusting a leaf pins that one certificate and fails once it is re-issued - point the source at the issuing CA (usually ca.crt, not tls.crt) unless pinning is intended",
			r.bundle.Name, what, pki.Describe(c))))
	}
}

// skipped reports non-certificate PEM blocks, which are never copied.
func (r *renderer) skipped(ref kube.Ref, field string, d pki.Decoded) {
	if len(d.SkippedTypes) == 0 {
		return
	}
	msg := fmt.Sprintf("bundle %q: skipped %d non-certificate PEM block(s) (%s); they are never copied into a bundle",
		r.bundle.Name, len(d.SkippedTypes), strings.ToLower(strings.Join(d.SkippedTypes, ", ")))
	if d.HasPrivateKey() {
		msg += "; a private key does not belong in a CA source - point the source at a key that holds only certificates"
	}
	r.add(ref.Result(framework.Warning, field, msg))
}

// origin is where a current certificate was read: a source object's field,
// or the policy's inline source.
type origin struct {
	ref   kube.Ref
	field string
	// where, when set, describes a CA current in another package of the
	// bundle's trust domain (domain.go).
	where string
}

// from records where certs were read, first occurrence kept.
func (r *renderer) from(ref kube.Ref, field string, certs []*x509.Certificate) {
	if r.origins == nil {
		r.origins = map[pki.Fingerprint]origin{}
	}
	for _, c := range certs {
		fp := pki.FingerprintOf(c)
		if _, ok := r.origins[fp]; !ok {
			r.origins[fp] = origin{ref: ref, field: field}
		}
	}
}

// reportExpiredSources warns, once per bundle, about each expired source
// certificate, at the source object and field it was read from: bundle
// rule 1 drops it from every target alike.
func (r *renderer) reportExpiredSources(current []*x509.Certificate) {
	seen := pki.NewSet()
	for _, c := range current {
		if !seen.Add(c) || !pki.Expired(c, r.env.Now) {
			continue
		}
		o, ok := r.origins[pki.FingerprintOf(c)]
		if !ok {
			o = origin{ref: r.env.PolicyRef, field: r.path + ".sources"}
		}
		r.add(o.ref.Result(framework.Warning, o.field, fmt.Sprintf("bundle %q: source certificate %s has expired and is not trusted", r.bundle.Name, pki.Describe(c))))
	}
}
