//go:build devtools

package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The finder is the replay's own answer to "which values of this file hold
// trust, and which CAs": the cross-check of invariant 3, written apart from
// rotate-certs (it imports nothing of it) and kept simple enough to be
// obviously right. A trust value is a string that holds certificates and
// nothing else - PEM blocks (text around them allowed), base64 of PEM, or
// base64 of DER - all of them CAs (basic constraints, IsCA), none of them
// issued by another in the same value (that is a chain, not trust), and
// not at a key the contract names a certificate's own (tls.crt and the
// meshes' chain keys, below). It looks everywhere: every string of every
// YAML or JSON document, strings inside strings that are themselves YAML
// or JSON (a kubeconfig in a Secret, an Argo CD cluster's config, Helm
// values given as text), and certificate files (*.pem, *.crt, *.cer,
// *.key) whole.

// chainKeys are the data keys the contract names a certificate and its
// chain, not trust (docs/reference/diff.md): a CA there is not a trust
// value.
var chainKeys = map[string]bool{
	"tls.crt": true, "ca-cert.pem": true, "cert-chain.pem": true,
	"crt.pem": true, "cert.pem": true, "tls-combined.pem": true,
}

// place is where a trust value sits: the file, the document (its kind and
// name, or its position when it has none) and the value's path in it.
type place struct {
	File string
	Doc  string
	Path string
	// Kind is the kind of place (placeKind), for the report.
	Kind string
}

// caSet is the CAs of one value: SHA-256 of the DER (hex) to subject.
type caSet map[string]string

// maxNesting bounds how deep strings that are YAML inside YAML are read.
const maxNesting = 2

// findTrust returns every trust value of a file's content, by place. A
// manifest that does not parse as YAML is an error; a certificate file
// that holds no certificate has no trust value.
func findTrust(file string, content []byte) (map[place]caSet, error) {
	found := map[place]caSet{}
	if isCertFile(file) {
		if cas, ok := trustValue(string(content), path.Base(file)); ok {
			found[place{File: file, Kind: kindCertFile}] = cas
		}
		return found, nil
	}
	docs, err := decodeDocuments(content)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for i, doc := range docs {
		key := docKey(doc, i)
		seen[key]++
		if seen[key] > 1 {
			key += "#" + strconv.Itoa(seen[key])
		}
		w := walker{file: file, doc: key, kind: scalarAt(doc, "kind"), found: found}
		w.walk(doc, "", "", 0)
	}
	return found, nil
}

// decodeDocuments decodes every YAML document of content (JSON is YAML),
// a List's items each a document.
func decodeDocuments(content []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(content))
	var docs []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(doc.Content) > 0 {
			docs = append(docs, listItems(doc.Content[0])...)
		}
	}
}

// listItems is a document, or the items of a List (kubectl's kind: List,
// as kubectl get -o yaml and linkerd inject write): each item is an object
// of its own.
func listItems(doc *yaml.Node) []*yaml.Node {
	items := child(doc, "items")
	if scalarAt(doc, "kind") != "List" || items == nil || items.Kind != yaml.SequenceNode {
		return []*yaml.Node{doc}
	}
	var out []*yaml.Node
	for _, item := range items.Content {
		if item.Kind == yaml.MappingNode {
			out = append(out, item)
		}
	}
	return out
}

// docKey names a document by API group, kind, namespace and name, as an
// object is told apart in a directory, or by its position when it has no
// kind and name.
func docKey(doc *yaml.Node, i int) string {
	kind, name := scalarAt(doc, "kind"), scalarAt(doc, "metadata", "name")
	if kind == "" || name == "" {
		return "document " + strconv.Itoa(i+1)
	}
	group, _, _ := strings.Cut(scalarAt(doc, "apiVersion"), "/")
	if !strings.Contains(scalarAt(doc, "apiVersion"), "/") {
		group = ""
	}
	if ns := scalarAt(doc, "metadata", "namespace"); ns != "" {
		name = ns + "/" + name
	}
	if group != "" {
		kind = kind + "." + group
	}
	return kind + " " + name
}

// scalarAt is the string at keys below a mapping node, or "".
func scalarAt(n *yaml.Node, keys ...string) string {
	for _, k := range keys {
		n = child(n, k)
	}
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// walker visits every string of one document.
type walker struct {
	file, doc, kind string
	found           map[place]caSet
}

// walk visits n, found at path at under the mapping key key ("" for a
// sequence item or a document).
func (w walker) walk(n *yaml.Node, at, key string, depth int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			w.walk(n.Content[i+1], join(at, k), k, depth)
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			w.walk(item, at+"["+itemName(item, i)+"]", "", depth)
		}
	case yaml.ScalarNode:
		w.value(n.Value, at, key, depth)
	case yaml.AliasNode:
		// an alias repeats a value found at its anchor
	}
}

// itemName names a sequence item by its name field (containers, env
// entries, volumes), else by its position: adding an env entry does not
// move the others.
func itemName(item *yaml.Node, i int) string {
	if name := scalarAt(item, "name"); name != "" {
		return name
	}
	return strconv.Itoa(i)
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	if strings.HasSuffix(at, "|") {
		return at + key
	}
	return at + "." + key
}

// value records a string that is a trust value, or reads a string that is
// YAML or JSON (kept as text, or base64 of it) and holds certificate data
// for the values inside.
func (w walker) value(s, at, key string, depth int) {
	if cas, ok := trustValue(s, key); ok {
		w.found[place{File: w.file, Doc: w.doc, Path: at, Kind: placeKind(w.kind, at)}] = cas
		return
	}
	if depth >= maxNesting {
		return
	}
	text := s
	if raw, ok := decodeBase64(s); ok {
		text = string(raw)
	}
	if !strings.Contains(text, "\n") && !strings.HasPrefix(strings.TrimSpace(text), "{") || !holdsCertData(text) {
		return
	}
	var inner yaml.Node
	if yaml.Unmarshal([]byte(text), &inner) != nil || len(inner.Content) == 0 {
		return
	}
	if root := inner.Content[0]; root.Kind == yaml.MappingNode || root.Kind == yaml.SequenceNode {
		w.walk(root, at+"|", "", depth+1)
	}
}

// certMarkers start what a value holding certificates holds: PEM, base64
// of PEM, base64 of DER.
var certMarkers = []string{"-----BEGIN CERTIFICATE", "LS0tLS1CRUdJTi", "MII"}

// holdsCertData reports whether text may hold a certificate somewhere: the
// finder reads YAML inside a string only then (CRDs hold thousands of
// multi-line descriptions).
func holdsCertData(text string) bool {
	for _, m := range certMarkers {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// trustValue reports whether s holds trust and which CAs: certificates and
// nothing else, every one a CA, none issued by another of s, at a key that
// is not a certificate's own.
func trustValue(s, key string) (caSet, bool) {
	if chainKeys[key] {
		return nil, false
	}
	certs, ok := certificates(s)
	if !ok || len(certs) == 0 {
		return nil, false
	}
	cas := caSet{}
	for _, c := range certs {
		if !c.BasicConstraintsValid || !c.IsCA {
			return nil, false
		}
		for _, other := range certs {
			if other != c && bytes.Equal(c.RawIssuer, other.RawSubject) && c.CheckSignatureFrom(other) == nil {
				return nil, false
			}
		}
		sum := sha256.Sum256(c.Raw)
		cas[hex.EncodeToString(sum[:])] = c.Subject.String()
	}
	return cas, true
}

// certificates parses s as PEM (only CERTIFICATE blocks), as base64 of PEM
// or as base64 of DER; ok is false when s holds anything else too (a key),
// or a block that does not parse.
func certificates(s string) ([]*x509.Certificate, bool) {
	if !strings.Contains(s, "-----BEGIN ") {
		raw, ok := decodeBase64(s)
		if !ok {
			return nil, false
		}
		if !bytes.Contains(raw, []byte("-----BEGIN ")) {
			certs, err := x509.ParseCertificates(raw)
			return certs, err == nil
		}
		s = string(raw)
	}
	var certs []*x509.Certificate
	rest := []byte(s)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return certs, true
		}
		if block.Type != "CERTIFICATE" {
			return nil, false
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, false
		}
		certs = append(certs, c)
	}
}

var base64Text = regexp.MustCompile(`^[A-Za-z0-9+/=\s]+$`)

// decodeBase64 decodes s when it is standard base64 (line breaks allowed)
// of at least 64 characters: shorter strings hold no certificate.
func decodeBase64(s string) ([]byte, bool) {
	if len(s) < 64 || !base64Text.MatchString(s) {
		return nil, false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	return raw, err == nil
}

// Kinds of place, for the report: the first four are the places diff
// models (docs/reference/diff.md); the rest are places the finder sees and
// diff does not read yet.
const (
	kindData           = "Secret or ConfigMap value"
	kindCABundle       = "caBundle field"
	kindCTB            = "ClusterTrustBundle"
	kindInLine         = "trust-manager Bundle inLine"
	kindEnv            = "env value"
	kindHelm           = "Helm values (HelmRelease, Application)"
	kindKubeconfig     = "kubeconfig certificate-authority-data"
	kindArgoCluster    = "Argo CD cluster caData"
	kindNested         = "YAML inside a Secret or ConfigMap value"
	kindCertFile       = "certificate file"
	kindKustomizeInput = "certificate file in a kustomization directory"
	kindNoKind         = "YAML without a kind (chart values, configuration)"
	kindOther          = "other field"
)

// placeKind classifies a trust value by the kind of the object holding it
// and its path.
func placeKind(kind, at string) string {
	switch {
	case strings.Contains(at, "certificate-authority-data"):
		return kindKubeconfig
	case strings.HasSuffix(at, "caData"):
		return kindArgoCluster
	case (kind == "Secret" || kind == "ConfigMap") && strings.Contains(at, "|"):
		return kindNested
	case (kind == "Secret" || kind == "ConfigMap") && hasAnyPrefix(at, "data.", "stringData.", "binaryData."):
		return kindData
	case strings.HasSuffix(at, "caBundle"):
		return kindCABundle
	case kind == "ClusterTrustBundle" && at == "spec.trustBundle":
		return kindCTB
	case kind == "Bundle" && strings.HasPrefix(at, "spec.sources[") && strings.HasSuffix(at, "inLine"):
		return kindInLine
	case strings.Contains(at, ".env[") && strings.HasSuffix(at, ".value"):
		return kindEnv
	case kind == "HelmRelease" && strings.HasPrefix(at, "spec.values"),
		kind == "Application" && strings.Contains(at, "helm."):
		return kindHelm
	case kind == "":
		return kindNoKind
	}
	return kindOther
}

// modeled reports whether diff reads trust at places of this kind today.
func modeled(kind string) bool {
	switch kind {
	case kindData, kindCABundle, kindCTB, kindInLine, kindEnv, kindHelm, kindKubeconfig, kindArgoCluster,
		kindCertFile, kindKustomizeInput, kindNoKind:
		return true
	}
	return false
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// describe lists CAs by subject and the start of their SHA-256, never
// more: no key material leaves the harness.
func describe(shas []string, cas caSet) string {
	var parts []string
	for _, sha := range shas {
		parts = append(parts, fmt.Sprintf("%s (sha256 %s)", cas[sha], sha[:16]))
	}
	return strings.Join(parts, ", ")
}
