package trustdiff

import (
	"crypto/sha256"
	"strconv"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// keyPlace is a value of a tree that holds private key material where no
// key belongs: anywhere but a Secret's value named for a key (tls.key,
// ca.key, key.pem, ssh-privatekey). Only the place is kept; digest tells
// the key apart across the two trees and is never shown.
type keyPlace struct {
	resource Resource
	field    string
	digest   [sha256.Size]byte
}

// at is the identity of the place and what it holds across the two trees.
func (k keyPlace) at() string {
	return k.resource.id() + "\x00" + valueField(k.resource, k.field) + "\x00" + string(k.digest[:])
}

// privateKeys records the values of item that hold private key material
// where no key belongs. Every scalar is looked at: a ConfigMap's value, a
// caBundle, a pod template's env value, an annotation, Helm values, a
// custom resource's spec. A Secret's data and stringData are looked at
// as values (base64 decoded); those named for a key are where keys
// belong. A SOPS-encrypted object holds no key in the clear.
func (b *builder) privateKeys(item *yaml.RNode) {
	r := b.in.Memo.of(item)
	if !r.hasKeys {
		r.keys, r.hasKeys = keysIn(item), true
	}
	for _, k := range r.keys {
		b.model.keys = append(b.model.keys, keyPlace{resource: b.resource(kube.RefOf(item)), field: k.field, digest: k.digest})
	}
}

// keysIn returns the private keys in item (privateKeys), by field and
// digest.
func keysIn(item *yaml.RNode) []keyHit {
	if kube.IsSOPSEncrypted(item) {
		return nil
	}
	var out []keyHit
	w := keyWalker{secret: item.GetKind() == "Secret" && item.GetApiVersion() == "v1", data: item.GetKind() == "ConfigMap" || item.GetKind() == "Secret"}
	w.found = func(field string, value string) {
		out = append(out, keyHit{field: field, digest: sha256.Sum256([]byte(value))})
	}
	w.walk(item.YNode(), 0)
	return out
}

// keyWalker walks one object's nodes, keeping the path it is at.
type keyWalker struct {
	secret, data bool
	path         []string
	found        func(field, value string)
}

// maxDepth bounds the walk.
const maxDepth = 256

// walk looks at every scalar under n once. An alias is not followed: what
// it names is walked where its anchor is (an alias may name a node that
// holds it, and aliases of aliases grow exponentially).
func (w *keyWalker) walk(n *yaml.Node, depth int) {
	if n == nil || depth > maxDepth {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			w.walk(c, depth+1)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			switch {
			case w.skip(k):
				continue
			case w.secret && len(w.path) == 1 && (w.path[0] == "data" || w.path[0] == "stringData"):
				w.secretValue(k, n.Content[i+1])
				continue
			}
			w.path = append(w.path, w.segment(k))
			w.walk(n.Content[i+1], depth+1)
			w.path = w.path[:len(w.path)-1]
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			w.path = append(w.path, "["+elementName(e, i)+"]")
			w.walk(e, depth+1)
			w.path = w.path[:len(w.path)-1]
		}
	case yaml.ScalarNode:
		w.scalar(n.Value)
	}
}

// skip reports whether key k, at the path walked, is not walked: an
// annotation a tool records where it read the object in.
func (w *keyWalker) skip(k string) bool {
	return len(w.path) == 2 && w.path[0] == "metadata" && w.path[1] == "annotations" &&
		(strings.HasPrefix(k, "internal.config.kubernetes.io/") || strings.HasPrefix(k, "config.kubernetes.io/") || strings.HasPrefix(k, "kustomize.config.k8s.io/"))
}

// segment is the path segment of mapping key k: ".k", or "[k]" for a
// key with dots (an annotation), "k" at the top; the key as written
// when it is plain, else described (kube.Safe). A Secret's or
// ConfigMap's value is "data.KEY", as the rest of the diff names it.
func (w *keyWalker) segment(k string) string {
	switch {
	case len(w.path) == 0:
		return kube.Safe(k)
	case len(w.path) == 1 && w.data && isDataField(w.path[0]):
		return "." + kube.Safe(k)
	case strings.ContainsAny(k, "./") || !kube.Plain(k):
		return "[" + kube.Safe(k) + "]"
	}
	return "." + k
}

// isDataField reports whether a top-level field holds a Secret's or
// ConfigMap's values.
func isDataField(f string) bool { return f == "data" || f == "stringData" || f == "binaryData" }

// elementName names a list element as the inventory names a webhook:
// "name=N" when it has a name field (a container, an env variable), else
// its index.
func elementName(e *yaml.Node, i int) string {
	if e.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(e.Content); j += 2 {
			if e.Content[j].Value == "name" && e.Content[j+1].Kind == yaml.ScalarNode && e.Content[j+1].Value != "" {
				return "name=" + kube.Safe(e.Content[j+1].Value)
			}
		}
	}
	return strconv.Itoa(i)
}

// scalar looks at one value at the path walked.
func (w *keyWalker) scalar(v string) {
	if len(v) >= minKey && pki.EmbedsPrivateKey([]byte(v)) {
		w.found(strings.Join(w.path, ""), v)
	}
}

// minKey is shorter than any key, PEM, DER or base64.
const minKey = 40

// secretValue looks at a Secret's value named k (n): the value itself,
// base64 decoded for data; it is a key's place when it is named for one.
// What a document inside it holds (a kubeconfig's client-key-data, a
// JSON config's keyData) is the Secret's to keep.
func (w *keyWalker) secretValue(k string, n *yaml.Node) {
	if n.Kind == yaml.AliasNode && n.Alias != nil { // tls.key: &k ..., ca.crt: *k
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode || len(n.Value) < minKey || keyName(k) || !pki.HoldsPrivateKey([]byte(n.Value)) {
		return
	}
	w.found(w.path[0]+"."+kube.Safe(k), n.Value)
}

// keyName reports whether a Secret's data key is named for key material:
// tls.key, ca.key, key.pem, ca-key.pem, ssh-privatekey, sshPrivateKey,
// Flux's identity, an SSH id_* file, cert-manager's tls-combined.pem
// (the certificate and its key by design), a keystore.
func keyName(k string) bool {
	k = strings.ToLower(k)
	switch {
	case strings.HasSuffix(k, ".pub"):
		return false
	case strings.Contains(k, "key"), k == "identity", strings.HasPrefix(k, "id_"), strings.HasSuffix(k, "combined.pem"):
		return true
	}
	return strings.HasSuffix(k, ".p12") || strings.HasSuffix(k, ".pfx") || strings.HasSuffix(k, ".jks")
}
