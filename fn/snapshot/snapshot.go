// Package snapshot turns Secrets and ConfigMaps as `kubectl get -o yaml`
// prints them into manifests fit to commit as trust bundle sources: the
// CA Secrets that certgen jobs and cert-manager create in the cluster, and
// that a repository therefore never holds.
//
// A snapshot copies by allowlist, never by denylist: apiVersion, kind,
// name, namespace, labels, the annotations it knows to be safe, a Secret
// type of the Kubernetes set (any other is written as Opaque) and the
// values that hold certificates, cut to their certificate blocks.
// Everything else is dropped and named in a note (never echoed when it
// could be key material). Each object is marked
// config.kubernetes.io/local-config: "true", so that kustomize and kpt
// hand it to rotate-certs as input and never apply it over the live
// object.
package snapshot

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// header is the comment above every snapshot object.
const header = "Snapshot of an object that lives in the cluster (rotate-certs snapshot): its\n" +
	"certificates only, read by rotate-certs as a bundle source and never applied\n" +
	"(local-config). Take it again when the live object changes."

// lastApplied is the annotation kubectl apply keeps: a copy of the whole
// object as applied, keys included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// safeAnnotations are the annotations a snapshot keeps: what cert-manager
// writes on the Secrets it issues - which Certificate (what the re-issue
// list names, with the command that renews it), which issuer, which names
// - public facts about the certificate.
var safeAnnotations = map[string]bool{
	"cert-manager.io/certificate-name": true,
	"cert-manager.io/issuer-name":      true,
	"cert-manager.io/issuer-kind":      true,
	"cert-manager.io/issuer-group":     true,
	"cert-manager.io/common-name":      true,
	"cert-manager.io/alt-names":        true,
	"cert-manager.io/ip-sans":          true,
	"cert-manager.io/uri-sans":         true,
	"cert-manager.io/email-sans":       true,
}

// secretTypes are the Secret types the Kubernetes API defines (core/v1
// SecretType); a snapshot writes any other as Opaque.
var secretTypes = map[string]bool{
	"Opaque":                              true,
	"kubernetes.io/service-account-token": true,
	"kubernetes.io/dockercfg":             true,
	"kubernetes.io/dockerconfigjson":      true,
	"kubernetes.io/basic-auth":            true,
	"kubernetes.io/ssh-auth":              true,
	"kubernetes.io/tls":                   true,
	"bootstrap.kubernetes.io/token":       true,
}

// kept are the fields a snapshot copies (the values of data, binaryData
// and stringData only when they hold certificates); metadataKept those of
// metadata.
var (
	kept         = map[string]bool{"apiVersion": true, "kind": true, "metadata": true, "type": true, "data": true, "binaryData": true, "stringData": true}
	metadataKept = map[string]bool{"name": true, "namespace": true, "labels": true, "annotations": true}
)

// Result is a snapshot: the objects to write, and notes on what was left
// out, for stderr. A note names objects, fields and PEM block types, never
// a value.
type Result struct {
	Objects []*yaml.RNode
	Notes   []string
}

// Take snapshots the Secrets and ConfigMaps of items (other kinds are
// skipped with a note). It fails on what cannot be what kubectl printed: a
// Secret value that is not base64, an object without a name, a data field
// that is not a map; and when no object holds a certificate.
func Take(items []*yaml.RNode) (Result, error) {
	var res Result
	for _, it := range items {
		obj, notes, err := take(it)
		if err != nil {
			return Result{}, err
		}
		res.Notes = append(res.Notes, notes...)
		if obj != nil {
			res.Objects = append(res.Objects, obj)
		}
	}
	if len(res.Objects) == 0 {
		return res, fmt.Errorf("no Secret or ConfigMap in the input holds a certificate; nothing to snapshot")
	}
	return res, nil
}

// take snapshots one item: the new object (nil when nothing is kept) and
// notes.
func take(it *yaml.RNode) (*yaml.RNode, []string, error) {
	kind, apiVersion := it.GetKind(), it.GetApiVersion()
	if err := kube.CheckShape(it, ""); err != nil {
		return nil, nil, fmt.Errorf("%s %s: %v", kube.Safe(apiVersion), kube.Safe(kind), err)
	}
	ref := kube.Ref{Kind: kind, Namespace: it.GetNamespace(), Name: it.GetName()}
	if (kind != "Secret" && kind != "ConfigMap") || apiVersion != "v1" {
		return nil, []string{fmt.Sprintf("skipped %s %s: a snapshot holds core v1 Secrets and ConfigMaps only", kube.Safe(apiVersion), ref)}, nil
	}
	if ref.Name == "" {
		return nil, nil, fmt.Errorf("a %s without metadata.name: not what kubectl get prints", kube.Safe(kind))
	}
	if !kube.ValidObjectName(ref.Name) {
		return nil, nil, fmt.Errorf("%s metadata.name is not a name the API server accepts (a lowercase DNS subdomain): not what kubectl get prints", ref)
	}
	if ref.Namespace != "" && !kube.ValidDNSLabel(ref.Namespace) {
		return nil, nil, fmt.Errorf("%s metadata.namespace is not a namespace the API server accepts (a lowercase DNS label): not what kubectl get prints", ref)
	}
	s := &snap{ref: ref}
	obj := yaml.NewMapRNode(nil)
	set := func(field string, v *yaml.RNode) { _ = obj.PipeE(yaml.SetField(field, v)) }
	set("apiVersion", yaml.NewStringRNode("v1"))
	set("kind", yaml.NewStringRNode(kind))
	s.dropFields(it, kind)
	set("metadata", s.metadata(it))
	if kind == "Secret" {
		set("type", yaml.NewStringRNode(s.secretType(it)))
	}
	kept := 0
	for _, f := range []struct {
		name    string
		encoded bool
	}{{"data", kind == "Secret"}, {"binaryData", true}, {"stringData", false}} {
		m, err := s.values(it, f.name, f.encoded)
		if err != nil {
			return nil, nil, err
		}
		if m != nil {
			set(f.name, m)
			kept += len(m.YNode().Content) / 2
		}
	}
	if kept == 0 {
		s.notef("not written: it holds no certificate")
		return nil, s.notes, nil
	}
	obj.YNode().HeadComment = header
	return obj, s.notes, nil
}

type snap struct {
	ref   kube.Ref
	notes []string
}

func (s *snap) notef(format string, args ...any) {
	s.notes = append(s.notes, s.ref.String()+": "+fmt.Sprintf(format, args...))
}

// dropFields notes every field of the object and of its metadata that a
// snapshot does not copy: the fields the API server sets (uid,
// resourceVersion, creationTimestamp, managedFields, ownerReferences -
// which name live objects by uid -, finalizers, status) and anything else
// the input holds (immutable, a field a tool added).
func (s *snap) dropFields(it *yaml.RNode, kind string) {
	var dropped []string
	for _, f := range fieldNames(it.YNode()) {
		if !kept[f] || (f == "type" && kind != "Secret") {
			dropped = append(dropped, kube.Safe(f))
		}
	}
	if meta := kube.At(it, yaml.MetadataField); meta != nil {
		for _, f := range fieldNames(meta.YNode()) {
			if !metadataKept[f] {
				dropped = append(dropped, "metadata."+kube.Safe(f))
			}
		}
	}
	if len(dropped) > 0 {
		slices.Sort(dropped)
		s.notef("dropped %s: a snapshot keeps only apiVersion, kind, name, namespace, labels, the annotations it knows, a Secret's type and the certificate values", strings.Join(dropped, ", "))
	}
}

// fieldNames returns the keys of mapping n.
func fieldNames(n *yaml.Node) []string {
	var out []string
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		out = append(out, n.Content[i].Value)
	}
	return out
}

// secretType returns the Secret's type when it is one the Kubernetes API
// defines, else Opaque (with a note that does not echo a value that could
// be key material).
func (s *snap) secretType(it *yaml.RNode) string {
	t := kube.At(it, "type")
	if t == nil {
		return "Opaque"
	}
	if y := t.YNode(); y.Kind == yaml.ScalarNode && secretTypes[y.Value] {
		return y.Value
	}
	what := "a YAML " + kube.NodeKindName(t.YNode().Kind)
	if t.YNode().Kind == yaml.ScalarNode {
		what = kube.Quote(t.YNode().Value)
	}
	s.notef("wrote type Opaque: type %s is not a Secret type of the Kubernetes API", what)
	return "Opaque"
}

// metadata keeps name, namespace, labels (a trust-manager Bundle selects
// its sources by label) and the annotations it knows to be safe, and adds
// local-config. Every other annotation is dropped and named: one that
// copies the object (last-applied-configuration) or holds key material
// says so; those that tools use to place an item in a file are not part
// of the object and go without a note.
func (s *snap) metadata(it *yaml.RNode) *yaml.RNode {
	meta := yaml.NewMapRNode(nil)
	_ = meta.PipeE(yaml.SetField("name", yaml.NewStringRNode(s.ref.Name)))
	if s.ref.Namespace != "" {
		_ = meta.PipeE(yaml.SetField("namespace", yaml.NewStringRNode(s.ref.Namespace)))
	}
	if labels := s.labels(it); len(labels) > 0 {
		_ = meta.PipeE(yaml.SetField("labels", stringMap(labels)))
	}
	annotations := map[string]string{}
	var unknown []string
	for k, v := range it.GetAnnotations() {
		switch {
		case k == lastApplied:
			s.notef("dropped annotation %s: a copy of the object as applied, keys included", k)
		case strings.HasPrefix(k, "internal.config.kubernetes.io/"), k == kioutil.LegacyPathAnnotation, k == kioutil.LegacyIndexAnnotation,
			k == kioutil.LegacyIdAnnotation:
			// Where a tool read the object from, not part of it.
		case holdsPrivateKey([]byte(v)) || holdsPrivateKey([]byte(k)):
			s.notef("dropped annotation %s: it holds a private key", kube.Safe(k))
		case safeAnnotations[k]:
			annotations[k] = v
		default:
			unknown = append(unknown, kube.Safe(k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		s.notef("dropped annotation(s) %s: a snapshot keeps only the annotations it knows to be safe (cert-manager's on the Secrets it issues)", strings.Join(unknown, ", "))
	}
	annotations[kube.LocalConfigAnnotation] = "true"
	_ = meta.PipeE(yaml.SetField("annotations", stringMap(annotations)))
	return meta
}

// labels returns the object's labels, without any whose name or value
// could be key material (the API server would refuse such a label anyway).
func (s *snap) labels(it *yaml.RNode) map[string]string {
	out := map[string]string{}
	for k, v := range it.GetLabels() {
		if !kube.Plain(k) || !kube.Plain(v) || holdsPrivateKey([]byte(v)) {
			s.notef("dropped label %s: not a label the API server accepts", kube.Safe(k))
			continue
		}
		out[k] = v
	}
	return out
}

// values returns the certificate values of data field name (nil when none
// is kept), each holding its certificates only, under the keys the API
// server accepts.
func (s *snap) values(it *yaml.RNode, name string, encoded bool) (*yaml.RNode, error) {
	f := it.Field(name)
	if f == nil || f.Value == nil || f.Value.YNode().Kind == yaml.ScalarNode && f.Value.YNode().ShortTag() == yaml.NodeTagNull {
		return nil, nil
	}
	if f.Value.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s %s is a YAML %s, not a map of keys to values", s.ref, name, kube.NodeKindName(f.Value.YNode().Kind))
	}
	keys, err := f.Value.Fields()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", s.ref, name, err)
	}
	slices.Sort(keys)
	out := yaml.NewMapRNode(nil)
	for _, key := range keys {
		if !kube.ValidDataKey(key) { // a name the API server refuses may hold anything, a key too
			s.notef("dropped %s.%s: not a data key the API server accepts", name, kube.Safe(key))
			continue
		}
		field := name + "." + key
		v := f.Value.Field(key).Value.YNode()
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s %s is a YAML %s, not a string", s.ref, field, kube.NodeKindName(v.Kind))
		}
		raw := []byte(v.Value)
		if encoded {
			if raw, err = base64.StdEncoding.DecodeString(v.Value); err != nil {
				return nil, fmt.Errorf("%s %s is not base64 (%v): not what kubectl get prints", s.ref, field, err)
			}
		}
		certs, ok := s.certificates(field, raw)
		if !ok {
			continue
		}
		value := v.Value
		if !bytes.Equal(certs, raw) {
			value = string(certs)
			if encoded {
				value = base64.StdEncoding.EncodeToString(certs)
			}
		}
		node := yaml.NewStringRNode(value)
		if !encoded && strings.Contains(value, "\n") {
			node.YNode().Style = yaml.LiteralStyle
		}
		_ = out.PipeE(yaml.SetField(key, node))
	}
	if len(out.YNode().Content) == 0 {
		return nil, nil
	}
	return out, nil
}

// certificates returns the certificates of a value (the value itself when
// it holds nothing else) and whether there is one. Only a CERTIFICATE
// block whose bytes parse as an X.509 certificate is kept, written anew
// from the parsed certificate's bytes: a block so labelled that does not
// parse (a DER private key armoured as CERTIFICATE) is dropped like any
// other block. What is dropped is noted by block type or by the place of
// the block, never by its content: a private key is never copied, nor
// echoed. A value that is one DER certificate (binaryData, a ca.der) is
// written as PEM from the parsed certificate.
func (s *snap) certificates(field string, raw []byte) ([]byte, bool) {
	if cert, err := x509.ParseCertificate(raw); err == nil {
		s.notef("wrote %s as PEM: it holds one DER certificate, and a trust bundle reads its sources as PEM", field)
		return pki.EncodePEM([]*x509.Certificate{cert}), true
	}
	var certs []*x509.Certificate
	var dropped, bad []string
	rest, n := raw, 0
	for {
		block, next := pem.Decode(rest)
		if block == nil {
			break
		}
		rest = next
		if block.Type != "CERTIFICATE" {
			dropped = append(dropped, strings.ToLower(block.Type))
			continue
		}
		n++
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			bad = append(bad, notCertificate(n, block.Bytes))
			continue
		}
		certs = append(certs, cert)
	}
	key := holdsPrivateKey(raw)
	switch {
	case len(certs) == 0 && len(bad) > 0:
		s.notef("dropped %s: %s", field, strings.Join(bad, "; "))
		return nil, false
	case len(certs) == 0 && key:
		s.notef("dropped %s: a private key, which a snapshot never copies", field)
		return nil, false
	case len(certs) == 0:
		s.notef("dropped %s: it holds no PEM certificate", field)
		return nil, false
	case len(dropped) > 0 || len(bad) > 0:
		what := bad
		if len(dropped) > 0 {
			what = append([]string{strings.Join(unique(dropped), ", ")}, bad...)
		}
		s.notef("kept only the certificates of %s: dropped %s", field, strings.Join(what, "; "))
	}
	out := pki.EncodePEM(certs)
	if len(dropped) == 0 && len(bad) == 0 && !key && bytes.Equal(bytes.TrimSpace(raw), bytes.TrimSpace(out)) {
		return raw, true
	}
	return out, true
}

// notCertificate says what CERTIFICATE block n (counted from 1) of a
// value is when its bytes do not parse as a certificate, without showing
// them.
func notCertificate(n int, der []byte) string {
	if pki.IsPrivateKeyDER(der) {
		return fmt.Sprintf("CERTIFICATE block %d, a private key, which a snapshot never copies", n)
	}
	return fmt.Sprintf("CERTIFICATE block %d, which is not an X.509 certificate", n)
}

// holdsPrivateKey reports whether b holds a private key (pki.HoldsPrivateKey)
// or what is left of one: the words PRIVATE KEY, as text or
// base64-encoded. A snapshot errs on the side of dropping.
func holdsPrivateKey(b []byte) bool {
	if pki.HoldsPrivateKey(b) || bytes.Contains(b, []byte("PRIVATE KEY")) {
		return true
	}
	der, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(b)))
	return err == nil && bytes.Contains(der, []byte("PRIVATE KEY"))
}

func unique(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// stringMap returns m as a mapping node, keys sorted.
func stringMap(m map[string]string) *yaml.RNode {
	out := yaml.NewMapRNode(nil)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := yaml.NewStringRNode(m[k])
		if strings.Contains(m[k], "\n") {
			v.YNode().Style = yaml.LiteralStyle
		}
		_ = out.PipeE(yaml.SetField(k, v))
	}
	return out
}

// Encode writes the objects as one YAML stream.
func Encode(objects []*yaml.RNode) ([]byte, error) {
	var b bytes.Buffer
	for i, o := range objects {
		s, err := o.String()
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(s)
	}
	return b.Bytes(), nil
}
