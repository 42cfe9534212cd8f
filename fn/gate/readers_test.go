package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// Who reads a trust object, as diff counts it, is what render rolls by
// (restart.Readers): these are the cases where the two once disagreed,
// each a change that breaks trust and passed the gate.

// webhookTree is a webhook project's layout: the ValidatingWebhookConfiguration
// whose caBundle is the serving CA (config/webhook), the serving Secret as
// `kubectl create secret tls webhook-server-cert --dry-run=client -o yaml`
// writes it - no namespace (secretNS ""): whatever applies it, with its
// namespace, places it - the CA's own Secret and the next CA's, staged
// before the rotation (what explains the new caBundle), and the webhook
// server
// (config/manager), which mounts the serving Secret (as a whole volume,
// or its tls.crt with subPath: mount).
func webhookTree(ca, leaf testpki.Cert, mount, secretNS string, annotations ...string) map[string]string {
	hook := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: validating-webhook-configuration\n" +
		"webhooks:\n- name: vwidget.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  clientConfig:\n    caBundle: " + b64(pem(ca)) +
		"\n    service: {name: webhook-service, namespace: widget-system, path: /validate-widget}\n"
	serving := object("v1", "Secret", secretNS, "webhook-server-cert", nil) + "type: kubernetes.io/tls\ndata:\n" +
		dataLines(map[string]string{"tls.crt": pem(leaf), "tls.key": string(leaf.KeyPEM())}, b64)
	volume := "      volumes:\n      - name: cert\n        secret:\n          secretName: webhook-server-cert\n"
	mountLine := "        volumeMounts:\n        - {name: cert, mountPath: /tmp/k8s-webhook-server/serving-certs, readOnly: true}\n"
	if mount == "subPath" {
		mountLine = "        volumeMounts:\n        - {name: cert, mountPath: /certs/tls.crt, subPath: tls.crt}\n"
	}
	manager := object("apps/v1", "Deployment", "widget-system", "controller-manager", annotations) +
		"spec:\n  selector:\n    matchLabels: {control-plane: controller-manager}\n  template:\n    metadata:\n      labels: {control-plane: controller-manager}\n" +
		"    spec:\n      containers:\n      - name: manager\n        image: example/widget-controller\n        ports:\n        - {containerPort: 9443, name: webhook-server}\n" +
		mountLine + volume
	return map[string]string{
		"config/webhook/manifests.yaml": hook,
		"config/webhook/secret.yaml":    serving,
		"config/manager/manager.yaml":   manager,
		"config/ca/ca.yaml":             secret("widget-system", "webhook-ca", map[string]string{"tls.crt": pem(ca), "tls.key": string(ca.KeyPEM())}),
		"config/ca/next.yaml":           secret("widget-system", "webhook-ca-next", map[string]string{"tls.crt": pem(caNew), "tls.key": string(caNew.KeyPEM())}),
	}
}

// TestWebhookRotatedInOneCommit: the CA (caBundle) and the serving
// certificate replaced in one commit, the server not rolled. A server that
// loads its certificate once - the default for a whole-volume mount
// without rotate-certs.dev/reload: hot, as render rolls it - keeps
// presenting the old certificate, which the API server, on the new
// caBundle, rejects: an old certificate still presented against the new
// trust. The serving Secret names no namespace: it is the server's.
func TestWebhookRotatedInOneCommit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		mount, ns   string
		annotations []string
		rolled      bool
		breaks      bool
	}{
		{name: "whole volume, no reload annotation", mount: "volume", breaks: true},
		{name: "whole volume, no reload annotation, the Secret namespaced", mount: "volume", ns: "widget-system", breaks: true},
		{name: "subPath", mount: "subPath", breaks: true},
		{name: "whole volume, reload: hot", mount: "volume", annotations: []string{"rotate-certs.dev/reload", "hot"}},
		{name: "rolled in the same commit", mount: "volume", rolled: true},
		{name: "reload: never, rolled by hand", mount: "volume", annotations: []string{"rotate-certs.dev/reload", "never"}, rolled: true, breaks: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			base := r.commit(webhookTree(caOld, leafOld, tc.mount, tc.ns, tc.annotations...))
			head := webhookTree(caNew, leafNew, tc.mount, tc.ns, tc.annotations...)
			if tc.rolled {
				head["config/manager/manager.yaml"] = strings.Replace(head["config/manager/manager.yaml"],
					"labels: {control-plane: controller-manager}\n    spec:", "labels: {control-plane: controller-manager}\n      annotations: {restarted-at: '2026-11-22'}\n    spec:", 1)
			}
			res, code := r.result(base, r.commit(head))
			var found *trustdiff.Break
			for i, b := range res.Breaks {
				if b.Certificate.SHA256 == shaOf(leafOld) && b.Trust.Resource.Kind == "ValidatingWebhookConfiguration" {
					found = &res.Breaks[i]
				}
			}
			if !tc.breaks {
				if code != exit.OK || len(res.Breaks) > 0 {
					t.Fatalf("exit %d, breaks %+v: want none", code, res.Breaks)
				}
				return
			}
			if code != exit.Failed || found == nil {
				t.Fatalf("exit %d, breaks %+v: want the old serving certificate, still presented, against the new caBundle", code, res.Breaks)
			}
			if found.Needs.SHA256 != shaOf(caOld) || len(found.Consumers) != 1 || found.Consumers[0].Via != "API server" {
				t.Errorf("break %+v: want it to need the old CA, rejected by the API server", *found)
			}
		})
	}
}

// gatewayMTLSTree is Envoy Gateway's client-mTLS layout (envoyproxy/gateway
// at d32f282, test/e2e/testdata/client-mtls-trustbundle.yaml and
// client-mtls.yaml), with our certificates: a Gateway with an HTTPS
// listener, a ClientTrafficPolicy targeting it whose
// spec.tls.clientValidation.caCertificateRefs names the CA that client
// certificates must chain to - a ClusterTrustBundle (kind
// ClusterTrustBundle, group "") or a ConfigMap's ca.crt - the client's
// certificate Secret (as `kubectl create secret generic --dry-run=client
// -o yaml` writes it), and the new CA's own Secret.
func gatewayMTLSTree(kind string, trust testpki.Cert) map[string]string {
	const ns = "gateway-infra"
	policy := "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: ClientTrafficPolicy\nmetadata:\n  name: client-mtls\n  namespace: " + ns +
		"\nspec:\n  targetRef:\n    group: gateway.networking.k8s.io\n    kind: Gateway\n    name: mtls-gateway\n    sectionName: mtls\n" +
		"  tls:\n    clientValidation:\n      caCertificateRefs:\n      - kind: " + kind + "\n        group: \"\"\n        name: client-ca\n"
	gw := "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: mtls-gateway\n  namespace: " + ns +
		"\nspec:\n  gatewayClassName: envoy-gateway\n  listeners:\n  - name: mtls\n    port: 443\n    protocol: HTTPS\n    hostname: www.example.com\n" +
		"    tls:\n      mode: Terminate\n      certificateRefs:\n      - {group: \"\", kind: Secret, name: server-tls}\n"
	ca := configMap(ns, "client-ca", map[string]string{"ca.crt": pem(trust)})
	if kind == "ClusterTrustBundle" {
		ca = "apiVersion: certificates.k8s.io/v1beta1\nkind: ClusterTrustBundle\nmetadata:\n  name: client-ca\nspec:\n  trustBundle: " + quote(pem(trust)) + "\n"
	}
	return map[string]string{
		"mtls/client-ca.yaml": ca,
		"mtls/gateway.yaml":   docs(gw, policy),
		"mtls/client.yaml": secret(ns, "client-example-com", map[string]string{"ca.crt": pem(caOld), "tls.crt": pem(clientOld),
			"tls.key": string(clientOld.KeyPEM())}),
		"mtls/new-ca.yaml": secret("cert-manager", "client-ca-2026", map[string]string{"tls.crt": pem(caNew), "tls.key": string(caNew.KeyPEM())}),
	}
}

var clientOld = testpki.Fixture("client-old")

// TestGatewayClientCAReplaced: the CA a ClientTrafficPolicy validates
// client certificates with is replaced while a client certificate of the
// old CA is still in use: the gateway reads the ClusterTrustBundle or
// ConfigMap (caCertificateRefs) and rejects the client - a break, where
// diff once said the object was read by nothing.
func TestGatewayClientCAReplaced(t *testing.T) {
	for _, kind := range []string{"ClusterTrustBundle", "ConfigMap"} {
		t.Run(kind, func(t *testing.T) {
			r := newRepo(t)
			base := r.commit(gatewayMTLSTree(kind, caOld))
			res, code := r.result(base, r.commit(map[string]string{"mtls/client-ca.yaml": gatewayMTLSTree(kind, caNew)["mtls/client-ca.yaml"]}))
			if code != exit.Failed || !breakNames(res.Breaks, "client-example-com data.tls.crt") {
				t.Fatalf("exit %d, breaks %+v: want the client certificate against the new client CA", code, res.Breaks)
			}
			b := res.Breaks[0]
			if b.Trust.Resource.Name != "client-ca" || len(b.Consumers) != 1 || b.Consumers[0].Resource.Kind != "ClientTrafficPolicy" ||
				b.Consumers[0].Via != "caCertificateRefs" || b.Consumers[0].Once {
				t.Errorf("break %+v: want client-ca, read by the ClientTrafficPolicy through caCertificateRefs, which follows updates", b)
			}
			if len(res.Planted) > 0 {
				t.Errorf("planted %+v: the new CA's own Secret explains it", res.Planted)
			}
		})
	}
}

// TestInvalidReloadIsAProblem: a rotate-certs.dev/reload value that is no
// reload class, which render refuses, is not taken as a reload class in
// silence: at HEAD diff cannot tell what the change does (exit 2, naming
// the workload and the field); at BASE it is a warning.
func TestInvalidReloadIsAProblem(t *testing.T) {
	bad := []string{"rotate-certs.dev/reload", "hott"}
	want := fmt.Sprintf("config/manager/manager.yaml: Deployment widget-system/controller-manager metadata.annotations.rotate-certs.dev/reload: %q is not a reload class", "hott")
	r := newRepo(t)
	good := r.commit(webhookTree(caOld, leafOld, "volume", ""))
	typo := r.commit(webhookTree(caOld, leafOld, "volume", "", bad...))
	if _, stderr, code := r.diff(good, typo, "table", false); code != exit.Usage || !strings.Contains(stderr, "at HEAD: "+want) {
		t.Errorf("exit %d, stderr %q: want exit 2 naming the workload and the field", code, stderr)
	}
	if _, stderr, code := r.diff(typo, good, "table", false); code != exit.OK || !strings.Contains(stderr, "at BASE: "+want) {
		t.Errorf("exit %d, stderr %q: want a warning naming the workload and the field", code, stderr)
	}
}
