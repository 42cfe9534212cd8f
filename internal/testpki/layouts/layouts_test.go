package layouts

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var (
	root   = testpki.NewCA("layouts-root", testpki.Date(2026, 1, 1), testpki.Days(3650))
	next   = testpki.NewCA("layouts-next", testpki.Date(2026, 6, 1), testpki.Days(3650))
	inter  = testpki.NewIntermediate("layouts-int", "Intermediate CA", root, testpki.Date(2026, 1, 1), testpki.Days(365))
	client = testpki.NewLeaf("layouts-client", root, testpki.Date(2026, 1, 1), testpki.Days(365))
)

// parse reads text's documents, failing the test when one is not YAML.
func parse(t *testing.T, what, text string) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(text), OmitReaderAnnotations: true}).Read()
	if err != nil || len(nodes) == 0 {
		t.Fatalf("%s: %d documents, %v:\n%s", what, len(nodes), err, text)
	}
	return nodes
}

// value returns the string at path of n, failing the test when absent.
func value(t *testing.T, n *yaml.RNode, path ...string) string {
	t.Helper()
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		t.Fatalf("no %v in\n%s", path, n.MustString())
	}
	return v.YNode().Value
}

// TestPluginCA: the generator names the four files Files writes, cert-chain
// is the intermediate and the root, root-cert the roots.
func TestPluginCA(t *testing.T) {
	p := PluginCA{Intermediate: inter, Root: root, Roots: []testpki.Cert{root, next}}
	files := p.Files("mesh/cluster1")
	k := parse(t, "kustomization", PluginCAKustomization("istiod.yaml"))[0]
	gen, err := k.Pipe(yaml.Lookup("secretGenerator", "0", "files"))
	if err != nil || gen == nil {
		t.Fatalf("no secretGenerator files: %v", err)
	}
	if len(gen.Content()) != 4 {
		t.Fatalf("the generator reads %d files, want 4", len(gen.Content()))
	}
	for _, f := range gen.Content() {
		if _, ok := files["mesh/"+f.Value]; !ok {
			t.Errorf("the generator reads %s, which Files does not write: %v", f.Value, files)
		}
	}
	if len(files) != 4 || files["mesh/cluster1/cert-chain.pem"] != pemOf(inter, root) || files["mesh/cluster1/root-cert.pem"] != pemOf(root, next) {
		t.Errorf("files %v", files)
	}
	if got := (PluginCA{Intermediate: inter, Root: root}).Data()["root-cert.pem"]; got != pemOf(root) {
		t.Errorf("root-cert.pem without Roots: %q, want the root", got)
	}
	if r := RootFiles("", root); r["root-cert.pem"] != pemOf(root) || !strings.Contains(r["root-key.pem"], "PRIVATE KEY") {
		t.Errorf("root files %v", r)
	}
}

// TestEmbedded: each manifest is YAML holding its certificates where the
// upstream project puts them.
func TestEmbedded(t *testing.T) {
	d := parse(t, "LinkerdInjected", LinkerdInjected("web", root, next))[0]
	if got := value(t, d, strings.Split("spec.template.spec.initContainers.[name=linkerd-proxy].env.[name=LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS].value", ".")...); got != pemOf(root, next) {
		t.Errorf("anchors %q", got)
	}
	hr := parse(t, "HelmRelease", LinkerdValues{Anchors: []testpki.Cert{root}, Issuer: &inter, IssuerKey: true, More: "extra: 1\n"}.HelmRelease())[0]
	if value(t, hr, "spec", "values", "identityTrustAnchorsPEM") != pemOf(root) || value(t, hr, "spec", "values", "identity", "issuer", "tls", "crtPEM") != pemOf(inter) ||
		!strings.Contains(value(t, hr, "spec", "values", "identity", "issuer", "tls", "keyPEM"), "PRIVATE KEY") || value(t, hr, "spec", "values", "extra") != "1" {
		t.Errorf("HelmRelease:\n%s", hr.MustString())
	}
	argo := parse(t, "ArgoCDCluster", ArgoCDCluster(root, client))[0]
	if !strings.Contains(value(t, argo, "stringData", "config"), `"caData": "`+b64(pemOf(root))+`"`) {
		t.Errorf("Argo CD cluster:\n%s", argo.MustString())
	}
	s := parse(t, "CAPIKubeconfig", CAPIKubeconfig("prod", root, client))[0]
	kc, err := base64.StdEncoding.DecodeString(value(t, s, "data", "value"))
	if err != nil || s.GetName() != "prod-kubeconfig" {
		t.Fatalf("kubeconfig Secret %s: %v", s.GetName(), err)
	}
	cfg := parse(t, "Kubeconfig", string(kc))[0]
	if value(t, cfg, "clusters", "[name=prod]", "cluster", "certificate-authority-data") != b64(pemOf(root)) ||
		value(t, cfg, "users", "[name=prod-admin]", "user", "client-certificate-data") != b64(pemOf(client)) ||
		value(t, cfg, "current-context") != "prod-admin@prod" {
		t.Errorf("kubeconfig:\n%s", kc)
	}
}
