package diff

import (
	"slices"
	"sort"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// A self-signed CA as cert-manager bootstraps one (cert-manager.io/docs,
// configuration/selfsigned, "Bootstrapping CA Issuers"): a selfSigned
// ClusterIssuer, a Certificate with isCA: true that it issues into Secret
// root-secret, and a CA ClusterIssuer that signs from that Secret. cert-
// manager writes the Secret as kubernetes.io/tls with tls.crt, tls.key and
// ca.crt, and for a self-signed certificate ca.crt is the certificate
// itself (cert-manager/cert-manager at
// 2d0d7f7f74241a9cbf79f0e2a7bb247238ee09fd,
// pkg/controller/certificaterequests/selfsigned/selfsigned.go: CA and
// Certificate are the same PEM). Our own certificates: two generations of
// the CA, one subject, new key (rotationPolicy: Always), 90 days each, the
// second issued at two thirds of the first (cert-manager's default
// renewBefore).
var (
	selfSignedCA1 = testpki.NewSubjectCA("my-selfsigned-ca-1", "my-selfsigned-ca", testpki.Date(2026, 9, 1), testpki.Days(90))
	selfSignedCA2 = testpki.NewSubjectCA("my-selfsigned-ca-2", "my-selfsigned-ca", testpki.Date(2026, 10, 31), testpki.Days(90))
)

const selfSignedIssuers = `apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata:
  name: selfsigned-issuer
spec:
  selfSigned: {}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: my-selfsigned-ca
  namespace: cert-manager
spec:
  isCA: true
  commonName: my-selfsigned-ca
  secretName: root-secret
  privateKey:
    algorithm: ECDSA
    size: 256
  issuerRef:
    name: selfsigned-issuer
    kind: ClusterIssuer
    group: cert-manager.io
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata:
  name: my-ca-issuer
spec:
  ca:
    secretName: root-secret
`

// certManagerSecret is a Secret as cert-manager writes it for Certificate
// cert (tls.crt, tls.key, ca.crt), as a snapshot commits it.
func certManagerSecret(ns, name, cert string, tlsCrt, ca testpki.Cert) string {
	return object("v1", "Secret", ns, name, []string{"cert-manager.io/certificate-name", cert, "cert-manager.io/issuer-kind", "ClusterIssuer"}) +
		"type: kubernetes.io/tls\ndata:\n" + dataLines(map[string]string{"ca.crt": pem(ca), "tls.crt": pem(tlsCrt), "tls.key": string(tlsCrt.KeyPEM())}, b64)
}

// selfSignedTree is the bootstrapped CA with root-secret holding root, and
// an application that trusts the CA through ConfigMap trusted-ca (its
// ca.crt: trusted) and presents a certificate of my-ca-issuer (app-tls,
// as cert-manager writes a leaf's Secret: ca.crt is its issuer).
func selfSignedTree(root testpki.Cert, trusted ...testpki.Cert) map[string]string {
	app := object("apps/v1", "Deployment", "shop", "app", nil) +
		"spec:\n  selector:\n    matchLabels: {app: app}\n  template:\n    metadata:\n      labels: {app: app}\n    spec:\n      containers:\n      - name: app\n        image: example/app\n" +
		"        volumeMounts:\n        - {name: tls, mountPath: /etc/tls}\n        - {name: trust, mountPath: /etc/trust}\n" +
		"      volumes:\n      - {name: tls, secret: {secretName: app-tls}}\n      - {name: trust, configMap: {name: trusted-ca}}\n"
	return map[string]string{
		"pki/issuers.yaml":     selfSignedIssuers,
		"pki/root-secret.yaml": certManagerSecret("cert-manager", "root-secret", "my-selfsigned-ca", root, root),
		"app/tls.yaml":         certManagerSecret("shop", "app-tls", "app", selfSignedLeaf, selfSignedCA1),
		"app/trust.yaml":       configMap("shop", "trusted-ca", map[string]string{"ca.crt": pem(trusted...)}),
		"app/app.yaml":         app,
	}
}

// selfSignedLeaf is the application's certificate, of the first CA.
var selfSignedLeaf = testpki.NewLeaf("app.shop.svc", selfSignedCA1, testpki.Date(2026, 9, 2), testpki.Days(90))

// TestSelfSignedCARenewal: cert-manager renewing the self-signed CA - its
// Secret, committed from the cluster, holds the next CA in tls.crt and
// ca.crt alike - is no planted trust: the new CA is the CA's own key pair,
// at the place that held the CA's key pair at BASE (exit 1 before, for a
// CA "introduced with Secret root-secret data.tls.crt, whose value this
// change replaces"). A hostile change that uses the same layout to explain
// trust is still planted: a key pair added with the change explains
// nothing, not even its own ca.crt; a Secret that was no key pair at BASE
// made into one explains nothing; a key pair explains no CA elsewhere,
// renewed or not.
func TestSelfSignedCARenewal(t *testing.T) {
	attacker := testpki.Fixture("attacker-ca")
	cases := []struct {
		name    string
		head    map[string]string
		planted []string // resource and field of each planted CA
	}{
		{name: "renewal", head: map[string]string{"pki/root-secret.yaml": certManagerSecret("cert-manager", "root-secret", "my-selfsigned-ca", selfSignedCA2, selfSignedCA2)}},
		// The renewed CA explains nothing elsewhere in the change that
		// renews it: only BASE explains.
		{name: "renewal, the trust bundle gains the next CA", head: map[string]string{
			"pki/root-secret.yaml": certManagerSecret("cert-manager", "root-secret", "my-selfsigned-ca", selfSignedCA2, selfSignedCA2),
			"app/trust.yaml":       configMap("shop", "trusted-ca", map[string]string{"ca.crt": pem(selfSignedCA1, selfSignedCA2)}),
		}, planted: []string{"ConfigMap shop/trusted-ca data.ca.crt"}},
		{name: "a key pair added to explain a planted CA", head: map[string]string{
			"pki/evil.yaml":  certManagerSecret("cert-manager", "evil-ca", "evil", attacker, attacker),
			"app/trust.yaml": configMap("shop", "trusted-ca", map[string]string{"ca.crt": pem(selfSignedCA1, attacker)}),
		}, planted: []string{"ConfigMap shop/trusted-ca data.ca.crt", "Secret cert-manager/evil-ca data.ca.crt"}},
		{name: "a leaf's Secret made a key pair", head: map[string]string{
			"app/tls.yaml": certManagerSecret("shop", "app-tls", "app", attacker, attacker),
		}, planted: []string{"Secret shop/app-tls data.ca.crt"}},
		{name: "the key pair replaced to explain a planted CA", head: map[string]string{
			"pki/root-secret.yaml": certManagerSecret("cert-manager", "root-secret", "my-selfsigned-ca", attacker, attacker),
			"app/trust.yaml":       configMap("shop", "trusted-ca", map[string]string{"ca.crt": pem(selfSignedCA1, attacker)}),
		}, planted: []string{"ConfigMap shop/trusted-ca data.ca.crt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			base := r.commit(selfSignedTree(selfSignedCA1, selfSignedCA1))
			res, code := r.result(base, r.commit(tc.head))
			var planted []string
			for _, p := range res.Planted {
				planted = append(planted, p.Resource.String()+" "+p.Field)
			}
			sort.Strings(planted)
			if !slices.Equal(planted, tc.planted) {
				t.Fatalf("planted %q, want %q (%+v)", planted, tc.planted, res.Planted)
			}
			if want := exit.OK; len(tc.planted) > 0 && code != exit.Failed || len(tc.planted) == 0 && code != want {
				t.Errorf("exit %d with planted %q", code, planted)
			}
			if tc.name != "renewal" {
				return
			}
			if root := trustOf(t, res, "root-secret", "data.ca.crt"); len(root.Added) != 1 || root.Added[0].Why != trustdiff.WhySource {
				t.Errorf("root-secret's new CA %+v: want it explained as the CA's own key pair", root.Added)
			}
		})
	}
}
