package diff

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/rotate-certs/rotate-certs/internal/testpki/layouts"
)

// envoyGatewayInput is the layout of Envoy Gateway's translator test
// input (envoyproxy/gateway internal/gatewayapi/testdata/*.in.yaml at
// d32f28294245): one document without a kind whose keys list objects by
// kind, a ConfigMap's ca.crt among them. No cluster gets the file.
func envoyGatewayInput(ca testpki.Cert, listener string) string {
	return "gateways:\n- apiVersion: gateway.networking.k8s.io/v1\n  kind: Gateway\n" +
		"  metadata:\n    name: gateway-1\n    namespace: envoy-gateway\n  spec:\n    listeners:\n    - name: " + listener + "\n      port: 80\n" +
		"configMaps:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: ca-cmap\n    namespace: envoy-gateway\n" +
		"  data:\n    ca.crt: |\n" + indent(pem(ca), "      ")
}

// chartValues is a Helm chart's values file holding a trust anchor
// (layouts.LinkerdValues: linkerd2's charts/linkerd-control-plane/
// values.yaml, identityTrustAnchorsPEM).
func chartValues(ca testpki.Cert, replicas string) string {
	return "controllerReplicas: " + replicas + "\n" + layouts.LinkerdValues{Anchors: []testpki.Cert{ca}}.YAML(0)
}

// TestCertificatesOutsideObjects: certificate material in documents that
// are no Kubernetes object is named when a change alters it - changed, not
// judged - and a change elsewhere in the file is none. Before, the replay
// found Envoy Gateway's test inputs gaining and losing CAs with nothing
// said (diff read no document without a kind).
func TestCertificatesOutsideObjects(t *testing.T) {
	r := newRepo(t)
	input, values := "internal/gatewayapi/testdata/backend-custom-ca.in.yaml", "charts/mesh/values.yaml"
	base := r.commit(map[string]string{values: chartValues(caOld, "1")})
	added := r.commit(map[string]string{input: envoyGatewayInput(caOld, "http")})
	res, code := r.result(base, added)
	if code != exit.OK || len(res.CertificateFiles) != 1 || res.CertificateFiles[0] != (trustdiff.CertFileChange{File: input, Change: "added"}) {
		t.Fatalf("a test input holding a CA added: exit %d, certificateFiles %+v, want it added", code, res.CertificateFiles)
	}
	quiet := r.commit(map[string]string{input: envoyGatewayInput(caOld, "https"), values: chartValues(caOld, "3")})
	if res, code := r.result(added, quiet); code != exit.OK || len(res.CertificateFiles) != 0 || len(res.Trust) != 0 {
		t.Fatalf("only other keys changed: exit %d, certificateFiles %+v, trust %+v: want nothing", code, res.CertificateFiles, res.Trust)
	}
	head := r.commit(map[string]string{values: chartValues(caNew, "3")})
	out, stderr, code := r.diff(quiet, head, "table", false)
	want := values + ": certificates outside any Kubernetes object changed; not judged"
	if code != exit.OK || !strings.Contains(out, want) || strings.Contains(out, "BEGIN") {
		t.Fatalf("exit %d, want 0 and %q, no PEM:\n%s\n%s", code, want, out, stderr)
	}
	// A bundle encoded whole with a comment line before its first block:
	// its armour is base64 at another place in a group than the start.
	proxy := "charts/proxy/values.yaml"
	before := r.commit(map[string]string{proxy: commentedBundleValues(caOld)})
	res, code = r.result(head, before)
	if code != exit.OK || len(res.CertificateFiles) != 1 || res.CertificateFiles[0] != (trustdiff.CertFileChange{File: proxy, Change: "added"}) {
		t.Fatalf("values holding an encoded bundle added: exit %d, certificateFiles %+v, want it added", code, res.CertificateFiles)
	}
	res, code = r.result(before, r.commit(map[string]string{proxy: commentedBundleValues(caNew)}))
	if code != exit.OK || len(res.CertificateFiles) != 1 || res.CertificateFiles[0] != (trustdiff.CertFileChange{File: proxy, Change: "changed"}) {
		t.Fatalf("the encoded bundle's CA replaced: exit %d, certificateFiles %+v, want it changed", code, res.CertificateFiles)
	}
}

// commentedBundleValues is a chart's values holding a CA bundle as base64
// of a PEM file that begins with a comment line (as ca-certificates'
// bundles do), 13 bytes: the armour is base64-encoded one byte into a
// group of three.
func commentedBundleValues(ca testpki.Cert) string {
	return "proxy:\n  customCABundle: " + b64("# corp roots\n"+pem(ca)) + "\n"
}
