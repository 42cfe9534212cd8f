package diff

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/rotate-certs/rotate-certs/internal/testpki/layouts"
)

var (
	anchor1 = testpki.NewSubjectCA("diff-anchor-1", "root.linkerd.cluster.local", testpki.Date(2026, 1, 1), testpki.Days(3650))
	anchor2 = testpki.NewSubjectCA("diff-anchor-2", "root.linkerd.cluster.local", testpki.Date(2026, 11, 1), testpki.Days(3650))
	issuer1 = testpki.NewIntermediate("diff-issuer-1", "identity.linkerd.cluster.local", anchor1, testpki.Date(2026, 6, 1), testpki.Days(365))
	issuer2 = testpki.NewIntermediate("diff-issuer-2", "identity.linkerd.cluster.local", anchor2, testpki.Date(2026, 11, 10), testpki.Days(365))
)

// linkerd is Linkerd's layout: the trust anchor's own Secret (cert-manager
// keeps it), the trust roots ConfigMap, the issuer Secret, the identity
// controller (volume) and destination, whose proxy reads the roots once
// through env.
func linkerd(anchor, issuer testpki.Cert, roots ...testpki.Cert) map[string]string {
	return map[string]string{
		"linkerd/anchor.yaml": secret("linkerd", "linkerd-trust-anchor", map[string]string{"tls.crt": pem(anchor), "tls.key": string(anchor.KeyPEM())}),
		"linkerd/roots.yaml":  configMap("linkerd", "linkerd-identity-trust-roots", map[string]string{"ca-bundle.crt": pem(roots...)}),
		"linkerd/issuer.yaml": secret("linkerd", "linkerd-identity-issuer", map[string]string{"ca.crt": pem(anchor), "tls.crt": pem(issuer), "tls.key": string(issuer.KeyPEM())}),
		"linkerd/identity.yaml": docs(deployment("linkerd", "linkerd-identity", "ConfigMap", "linkerd-identity-trust-roots", "volume", ""),
			deployment("linkerd", "linkerd-destination", "ConfigMap", "linkerd-identity-trust-roots", "env", "ca-bundle.crt")),
	}
}

// withNext is files with the next anchor's Secret beside them (committed
// before it is used).
func withNext(files map[string]string, next testpki.Cert) map[string]string {
	files["linkerd/next.yaml"] = secret("linkerd", "linkerd-trust-anchor-next", map[string]string{"tls.crt": pem(next), "tls.key": string(next.KeyPEM())})
	return files
}

// istio is Istio's plug-in CA layout: cacerts, read by istiod, and the
// root's own Secret.
func istio(root, inter testpki.Cert, roots ...testpki.Cert) map[string]string {
	return map[string]string{
		"istio/root.yaml":    secret("istio-system", "istio-root-ca", map[string]string{"tls.crt": pem(root), "tls.key": string(root.KeyPEM())}),
		"istio/cacerts.yaml": secret("istio-system", "cacerts", layouts.PluginCA{Intermediate: inter, Root: root, Roots: roots}.Data()),
		"istio/istiod.yaml":  deployment("istio-system", "istiod", "Secret", "cacerts", "volume", ""),
	}
}

var (
	istioRoot1 = testpki.NewSubjectCA("diff-istio-root-1", "Root CA", testpki.Date(2026, 1, 1), testpki.Days(3650))
	istioRoot2 = testpki.NewSubjectCA("diff-istio-root-2", "Root CA", testpki.Date(2026, 11, 1), testpki.Days(3650))
	istioInt1  = testpki.NewIntermediate("diff-istio-int-1", "Intermediate CA", istioRoot1, testpki.Date(2026, 6, 1), testpki.Days(365))
	istioInt2  = testpki.NewIntermediate("diff-istio-int-2", "Intermediate CA", istioRoot2, testpki.Date(2026, 11, 10), testpki.Days(365))
)

// Without a policy, the step that brings the new anchor in its own Secret
// and into the roots at once is planted: a holder that gains a CA in the
// same change explains nothing (a Secret pasted beside a caBundle would
// explain anything). What breaks is judged all the same.
func TestAnchorRotationSteps(t *testing.T) {
	cases := []struct {
		name   string
		steps  []map[string]string
		breaks []string // per step after the first: the certificate key a break names, "" none
		// planted is, per step after the first, the words of its planted
		// reasons, "" for none planted
		planted []string
	}{
		{"linkerd in three steps", []map[string]string{
			linkerd(anchor1, issuer1, anchor1), linkerd(anchor2, issuer1, anchor1, anchor2),
			linkerd(anchor2, issuer2, anchor1, anchor2), linkerd(anchor2, issuer2, anchor2)}, []string{"", "", ""},
			[]string{"introduced with Secret linkerd/linkerd-trust-anchor data.tls.crt and 1 more, whose value this change replaces", "", ""}},
		{"linkerd in three steps, the new anchor's Secret committed before", []map[string]string{
			withNext(linkerd(anchor1, issuer1, anchor1), anchor2), withNext(linkerd(anchor2, issuer1, anchor1, anchor2), anchor2),
			linkerd(anchor2, issuer2, anchor1, anchor2), linkerd(anchor2, issuer2, anchor2)}, []string{"", "", ""}, []string{"", "", ""}},
		{"linkerd issuer re-issued before the roots hold the new anchor", []map[string]string{
			linkerd(anchor1, issuer1, anchor1), linkerd(anchor2, issuer2, anchor1)}, []string{"linkerd-identity-issuer data.tls.crt"}, nil},
		{"linkerd old anchor dropped before the issuer is re-issued", []map[string]string{
			linkerd(anchor2, issuer1, anchor1, anchor2), linkerd(anchor2, issuer1, anchor2)}, []string{"linkerd-identity-issuer data.tls.crt"}, nil},
		{"istio in three steps", []map[string]string{
			istio(istioRoot1, istioInt1, istioRoot1), istio(istioRoot2, istioInt1, istioRoot1, istioRoot2),
			istio(istioRoot2, istioInt2, istioRoot1, istioRoot2), istio(istioRoot2, istioInt2, istioRoot2)}, []string{"", "", ""},
			[]string{"introduced with Secret istio-system/cacerts data.cert-chain.pem and 1 more, whose value this change replaces", "", ""}},
		{"istio intermediate re-issued before root-cert.pem holds the new root", []map[string]string{
			istio(istioRoot1, istioInt1, istioRoot1), istio(istioRoot2, istioInt2, istioRoot1)}, []string{"cacerts data.ca-cert.pem"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			prev := r.commit(tc.steps[0])
			for i, step := range tc.steps[1:] {
				next := r.commit(step)
				res, code := r.result(prev, next)
				want, planted := tc.breaks[i], ""
				if tc.planted != nil {
					planted = tc.planted[i]
				}
				if planted != "" && (len(res.Planted) == 0 || !strings.Contains(res.Planted[0].Reason, planted)) {
					t.Fatalf("step %d: planted %+v, want it planted: %s", i+1, res.Planted, planted)
				}
				if want == "" && (planted == "" && code != exit.OK || planted != "" && code != exit.Failed || len(res.Breaks) > 0 || planted == "" && len(res.Planted) > 0) {
					t.Fatalf("step %d: exit %d, breaks %+v, planted %+v", i+1, code, res.Breaks, res.Planted)
				}
				if want != "" && (code != exit.Failed || !breakNames(res.Breaks, want)) {
					t.Fatalf("step %d: exit %d, breaks %+v, want one naming %s", i+1, code, res.Breaks, want)
				}
				prev = next
			}
		})
	}
}

func TestWebhookCABundleReplacedWithoutPolicy(t *testing.T) {
	r := newRepo(t)
	hook := func(ca testpki.Cert) string {
		return "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: policy-webhook\nwebhooks:\n- name: validate.example.com\n  clientConfig:\n    caBundle: " + b64(pem(ca)) + "\n    service: {name: webhook, namespace: policy}\n"
	}
	serving := func(leaf testpki.Cert) string {
		return secret("policy", "webhook-tls", map[string]string{"tls.crt": pem(leaf), "tls.key": string(leaf.KeyPEM())})
	}
	base := r.commit(map[string]string{"hook.yaml": hook(caOld), "tls.yaml": serving(leafOld)})
	head := r.commit(map[string]string{"hook.yaml": hook(attacker)})
	res, code := r.result(base, head)
	if code != exit.Failed || !breakNames(res.Breaks, "webhook-tls data.tls.crt") || len(res.Planted) != 1 {
		t.Fatalf("exit %d, breaks %+v, planted %+v", code, res.Breaks, res.Planted)
	}
	if c := res.Breaks[0].Readers; len(c) != 1 || c[0].Via != "API server" {
		t.Errorf("consumers %+v, want the API server", c)
	}
}

func TestClusterTrustBundleAndChartBump(t *testing.T) {
	ctb := func(cas ...testpki.Cert) string {
		return "apiVersion: certificates.k8s.io/v1beta1\nkind: ClusterTrustBundle\nmetadata:\n  name: example.com:signer:one\nspec:\n  signerName: example.com/signer\n  trustBundle: " + quote(pem(cas...)) + "\n"
	}
	reader := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: client\n  namespace: app\nspec:\n  containers:\n  - name: c\n    image: x\n    volumeMounts:\n    - {name: t, mountPath: /t}\n  volumes:\n  - name: t\n    projected:\n      sources:\n      - clusterTrustBundle: {name: \"example.com:signer:one\", path: ca.pem}\n"
	crd := func(ca testpki.Cert) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        caBundle: " + b64(pem(ca)) + "\n"
	}
	r := newRepo(t)
	base := r.commit(map[string]string{"ctb.yaml": ctb(caOld), "pod.yaml": reader, "chart/crd.yaml": crd(caOld),
		"srv.yaml": secret("app", "server", map[string]string{"tls.crt": pem(leafOld)}), "chart/ca.yaml": secret("chart", "chart-ca", map[string]string{"tls.crt": pem(caNew)})})
	head := r.commit(map[string]string{"ctb.yaml": ctb(caOld, caNew), "chart/crd.yaml": crd(caNew)})
	res, code := r.result(base, head)
	if code != exit.Failed || !breakNames(res.Breaks, "server data.tls.crt") {
		t.Fatalf("exit %d, breaks %+v (the chart's caBundle drops the CA the server leaf needs)", code, res.Breaks)
	}
	if tc := findTrust(t, res, "example.com:signer:one"); len(tc.Added) != 1 || tc.Added[0].Why != "source" || len(tc.Readers) != 1 {
		t.Errorf("ClusterTrustBundle change %+v", tc)
	}
	if len(res.Planted) != 0 {
		t.Errorf("planted %+v: the chart ships the new CA in its own Secret", res.Planted)
	}
}

// breakNames reports whether a break names the certificate at "name key".
func breakNames(bs []trustdiff.Break, want string) bool {
	for _, b := range bs {
		if strings.HasSuffix(b.Certificate.Resource.Name+" "+b.Certificate.Key, want) {
			return true
		}
	}
	return false
}
