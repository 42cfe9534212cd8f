// Package trustbundle maps a policy's trust bundles onto the input: it reads
// the sources and the existing targets from RNodes, hands plain
// certificates to package bundle, and writes the result back in place. It
// is the YAML side of SPEC.md section 4; the rules themselves live in
// package bundle.
package trustbundle

import (
	"crypto/x509"
	"fmt"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// readSources returns the current certificates of b in source order.
func (r *renderer) readSources() []*x509.Certificate {
	var out []*x509.Certificate
	for i, s := range r.bundle.Sources {
		field := fmt.Sprintf("%s.sources[%d]", r.path, i)
		if s.Inline != "" {
			if len(s.Inline) > MaxValueBytes {
				r.errorf(r.env.PolicyRef, field+".inline", "bundle %q: inline source is %s", r.bundle.Name, tooLarge(len(s.Inline)))
				continue
			}
			d, err := pki.DecodePEM([]byte(s.Inline))
			if err != nil {
				r.errorf(r.env.PolicyRef, field+".inline", "bundle %q: inline source: %v", r.bundle.Name, err)
				continue
			}
			r.skipped(r.env.PolicyRef, field+".inline", d)
			r.from(r.env.PolicyRef, field+".inline", d.Certificates)
			out = append(out, d.Certificates...)
			continue
		}
		out = append(out, r.readObjectSource(s, field)...)
	}
	return out
}

func (r *renderer) readObjectSource(s policy.Source, field string) []*x509.Certificate {
	ref := s.Ref()
	key := kube.Key{Kind: s.Kind(), Namespace: ref.Namespace, Name: ref.Name}
	node := r.env.Index.Get(key)
	if node == nil || node.GetApiVersion() != "v1" {
		if ref.Optional {
			r.add(r.env.PolicyRef.Result(framework.Info, field,
				fmt.Sprintf("bundle %q: optional source %s is not in the input; skipped", r.bundle.Name, key)))
			return nil
		}
		r.errorf(r.env.PolicyRef, field, "bundle %q: source %s is not in the input (mark it optional: true if it may be absent)", r.bundle.Name, key)
		return nil
	}
	obj := kube.RefOf(node)
	if kube.IsSOPSEncrypted(node) {
		r.errorf(obj, "sops", "bundle %q: source %s is SOPS-encrypted; decrypt it before rotate-certs runs (e.g. with ksops or Flux decryption), the function cannot read ciphertext", r.bundle.Name, obj)
		return nil
	}
	v, found, err := kube.Lookup(node, ref.Key)
	if err != nil {
		r.errorf(obj, kube.FieldOf(err), "bundle %q: source %s: %v", r.bundle.Name, obj, err)
		return nil
	}
	if !found || len(strings.TrimSpace(string(v.Bytes))) == 0 {
		what := "has no key " + ref.Key
		if found {
			what = "has an empty " + v.Field
		}
		if ref.Optional {
			r.add(obj.Result(framework.Info, dataField(s.Kind(), ref.Key, v),
				fmt.Sprintf("bundle %q: optional source %s %s; skipped", r.bundle.Name, obj, what)))
			return nil
		}
		r.errorf(obj, dataField(s.Kind(), ref.Key, v), "bundle %q: source %s %s", r.bundle.Name, obj, what)
		return nil
	}
	if len(v.Bytes) > MaxValueBytes {
		r.errorf(obj, v.Field, "bundle %q: source %s %s is %s", r.bundle.Name, obj, v.Field, tooLarge(len(v.Bytes)))
		return nil
	}
	d, err := pki.DecodePEM(v.Bytes)
	if err != nil {
		r.errorf(obj, v.Field, "bundle %q: source %s %s is not PEM certificate data: %v", r.bundle.Name, obj, v.Field, err)
		return nil
	}
	r.skipped(obj, v.Field, d)
	if len(d.Certificates) == 0 {
		if ref.Optional {
			r.add(obj.Result(framework.Info, v.Field, fmt.Sprintf("bundle %q: optional source %s %s holds no certificate; skipped", r.bundle.Name, obj, v.Field)))
			return nil
		}
		r.errorf(obj, v.Field, "bundle %q: source %s %s holds no certificate", r.bundle.Name, obj, v.Field)
	}
	r.from(obj, v.Field, d.Certificates)
	return d.Certificates
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

func dataField(kind, key string, v kube.Value) string {
	if v.Field != "" {
		return v.Field
	}
	return "data." + key
}
