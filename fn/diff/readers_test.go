package diff

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
			if found.Needs.SHA256 != shaOf(caOld) || len(found.Readers) != 1 || found.Readers[0].Via != "API server" {
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

// backendTLSTree is Envoy Gateway's Backend TLS layout (envoyproxy/gateway
// at d32f28294245e454d20f81d323d626a90e660c1e,
// test/e2e/testdata/httproute-with-dynamic-resolver-backend-with-tls.yaml
// and ...-with-clustertrustbundle.yaml; the Backend API in
// api/v1alpha1/backend_types.go: spec.tls.caCertificateRefs, Gateway API
// LocalObjectReferences {group, kind, name} in the Backend's namespace,
// a ConfigMap's or Secret's ca.crt or a ClusterTrustBundle), with our
// certificates: an HTTPRoute to a Backend of type DynamicResolver whose
// caCertificateRefs name the CA that the backend's serving certificate
// must chain to - a ConfigMap backend-ca-certificate (key ca.crt) or a
// ClusterTrustBundle of that name (group "") - the backend's serving
// Secret (kubernetes.io/tls) and the Deployment that mounts it, and the
// new CA's own Secret.
func backendTLSTree(kind string, trust testpki.Cert) map[string]string {
	const ns = "gateway-conformance-infra"
	route := "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: httproute-with-dynamic-resolver-backend-tls\n  namespace: " + ns +
		"\nspec:\n  parentRefs:\n  - name: same-namespace\n  rules:\n  - backendRefs:\n    - group: gateway.envoyproxy.io\n      kind: Backend\n      name: backend-dynamic-resolver-tls\n" +
		"    matches:\n    - path:\n        type: PathPrefix\n        value: /with-tls\n"
	backend := "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: Backend\nmetadata:\n  name: backend-dynamic-resolver-tls\n  namespace: " + ns +
		"\nspec:\n  type: DynamicResolver\n  tls:\n    caCertificateRefs:\n    - name: backend-ca-certificate\n      group: \"\"\n      kind: " + kind + "\n"
	ca := configMap(ns, "backend-ca-certificate", map[string]string{"ca.crt": pem(trust)})
	if kind == "ClusterTrustBundle" {
		ca = "apiVersion: certificates.k8s.io/v1beta1\nkind: ClusterTrustBundle\nmetadata:\n  name: backend-ca-certificate\nspec:\n  trustBundle: " + quote(pem(trust)) + "\n"
	}
	serving := object("v1", "Secret", ns, "backend-certificate", nil) + "type: kubernetes.io/tls\ndata:\n" +
		dataLines(map[string]string{"tls.crt": pem(leafOld), "tls.key": string(leafOld.KeyPEM())}, b64)
	server := object("apps/v1", "Deployment", ns, "backend-dynamic-resolver-tls", nil) +
		"spec:\n  replicas: 1\n  selector:\n    matchLabels: {app: backend-dynamic-resolver-tls}\n  template:\n    metadata:\n      labels: {app: backend-dynamic-resolver-tls}\n" +
		"    spec:\n      containers:\n      - name: tls-backend\n        image: registry.k8s.io/gateway-api/conformance/echo-basic:v0.1.0\n" +
		"        volumeMounts:\n        - {name: secret-volume, mountPath: /etc/secret-volume}\n        env:\n        - {name: TLS_SERVER_CERT, value: /etc/secret-volume/crt}\n" +
		"      volumes:\n      - name: secret-volume\n        secret:\n          secretName: backend-certificate\n          items:\n          - {key: tls.crt, path: crt}\n          - {key: tls.key, path: key}\n"
	return map[string]string{
		"backend/ca.yaml":     ca,
		"backend/route.yaml":  docs(route, backend),
		"backend/server.yaml": docs(serving, server),
		"backend/new-ca.yaml": secret("cert-manager", "backend-ca-2026", map[string]string{"tls.crt": pem(caNew), "tls.key": string(caNew.KeyPEM())}),
	}
}

// TestGatewayCAReplaced: the CA a gateway validates a peer with - an
// Envoy Gateway ClientTrafficPolicy its clients, a Backend its backend's
// serving certificate - is replaced while a certificate of the old CA is
// still presented: the gateway reads the ClusterTrustBundle or ConfigMap
// its caCertificateRefs name and rejects the peer - a break, where diff
// once said the object was read by nothing. The gateway follows each
// update of what it names (xDS): it does not read once.
func TestGatewayCAReplaced(t *testing.T) {
	for _, tc := range []struct {
		name              string
		tree              func(kind string, trust testpki.Cert) map[string]string
		file, cert, trust string
		reader            string
	}{
		{"ClientTrafficPolicy", gatewayMTLSTree, "mtls/client-ca.yaml", "client-example-com data.tls.crt", "client-ca", "ClientTrafficPolicy"},
		{"Backend", backendTLSTree, "backend/ca.yaml", "backend-certificate data.tls.crt", "backend-ca-certificate", "Backend"},
	} {
		for _, kind := range []string{"ClusterTrustBundle", "ConfigMap"} {
			t.Run(tc.name+" "+kind, func(t *testing.T) {
				r := newRepo(t)
				base := r.commit(tc.tree(kind, caOld))
				res, code := r.result(base, r.commit(map[string]string{tc.file: tc.tree(kind, caNew)[tc.file]}))
				if code != exit.Failed || !breakNames(res.Breaks, tc.cert) {
					t.Fatalf("exit %d, breaks %+v: want %s against the new CA", code, res.Breaks, tc.cert)
				}
				b := res.Breaks[0]
				if b.Trust.Resource.Name != tc.trust || len(b.Readers) != 1 || b.Readers[0].Resource.Kind != tc.reader ||
					b.Readers[0].Via != "caCertificateRefs" || b.Readers[0].Once {
					t.Errorf("break %+v: want %s, read by the %s through caCertificateRefs, which follows updates", b, tc.trust, tc.reader)
				}
				if len(res.Planted) > 0 {
					t.Errorf("planted %+v: the new CA's own Secret explains it", res.Planted)
				}
			})
		}
	}
}
