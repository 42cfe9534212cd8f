package inventory_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/internal/testitems"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/rotate-certs/rotate-certs/internal/testpki/layouts"
	"github.com/stretchr/testify/require"
)

// placed lists what the scan found with the kind of place and the name.
func placed(inv *inventory.Inventory) []string {
	var got []string
	for _, f := range inv.Certificates {
		got = append(got, fmt.Sprintf("%s %s %s place=%d name=%s", f.Ref, f.Key(), f.Cert.Subject.CommonName, f.Place, f.Name))
	}
	return got
}

// injected is a Deployment as `linkerd inject` writes it
// (layouts.LinkerdInjected: the proxy an init container with restartPolicy
// Always whose env holds the trust anchors as literal PEM); before native
// sidecars the proxy was a container (the CronJob below).
var injected = layouts.LinkerdInjected("web", testpki.Fixture("example-linkerd-anchor-old")) + `---
apiVersion: batch/v1
kind: CronJob
metadata: {name: report, namespace: emojivoto}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: linkerd-proxy
            env:
            - name: LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS
              value: {{b64 "example-linkerd-anchor-old"}}
            - name: SIGNING_KEY
              value: |
                {{key 16 "example-linkerd-anchor-old"}}
            - name: BROKEN
              value: |
                -----BEGIN CERTIFICATE-----
                AAAA
                -----END CERTIFICATE-----
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: rendered-elsewhere
  annotations: {config.kubernetes.io/local-config: "true"}
spec:
  template:
    spec:
      containers:
      - name: x
        env:
        - name: CA
          value: |
            {{pem 12 "example-linkerd-anchor-old"}}
`

func TestScanAllReadsEnvValues(t *testing.T) {
	items := testitems.Items(t, injected)
	require.Empty(t, inventory.Scan(items).Certificates, "Scan reads what the function's steps read: no pod template")
	inv := inventory.ScanAll(items)
	require.Equal(t, []string{
		"Deployment emojivoto/web spec.template.spec.initContainers[name=linkerd-proxy].env[name=LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS].value root.linkerd.cluster.local place=4 name=LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS",
		"CronJob emojivoto/report spec.jobTemplate.spec.template.spec.containers[name=linkerd-proxy].env[name=LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS].value root.linkerd.cluster.local place=4 name=LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS",
	}, placed(inv), "PEM and base64 of PEM; a key is no certificate; a local-config workload is not applied")
	onlyProblem(t, inv, "spec.jobTemplate.spec.template.spec.containers[name=linkerd-proxy].env[name=BROKEN].value")
}

// indentLines puts n spaces before every line of text.
func indentLines(n int, text []byte) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSuffix(string(text), "\n"), "\n", "\n"+pad) + "\n"
}

// onlyProblem requires inv's one problem to be at field, and to quote no
// key.
func onlyProblem(t *testing.T, inv *inventory.Inventory, field string) {
	t.Helper()
	require.Len(t, inv.Problems, 1)
	require.Equal(t, field, inv.Problems[0].Field)
	require.NotContains(t, inv.Problems[0].Message, "PRIVATE")
}

func TestScanAllReadsHelmValues(t *testing.T) {
	issuer := testpki.Fixture("example-linkerd-issuer-old")
	release := layouts.LinkerdValues{Anchors: []testpki.Cert{testpki.Fixture("example-linkerd-anchor-old")}, Issuer: &issuer, IssuerKey: true,
		More: "meshConfig:\n  caCertificates:\n  - pem: |\n" + indentLines(6, testpki.Fixture("example-istio-root-old").PEM())}.HelmRelease()
	inv := inventory.ScanAll(testitems.Items(t, release+`---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: mesh, namespace: argocd}
spec:
  source:
    chart: linkerd-control-plane
    helm:
      values: |
        identityTrustAnchorsPEM: |
          {{pem 10 "example-linkerd-anchor-new"}}
      valuesObject:
        proxyInjector:
          caBundle: {{b64 "example-platform-root-old"}}
      parameters:
      - name: identity.externalCA.anchor
        value: {{b64 "example-istio-root-new"}}
      - name: unrelated
        value: "3"
  sources:
  - repoURL: https://helm.linkerd.io/stable
    name: crds
    helm:
      valuesObject:
        trust:
        - name: corp
          pem: |
            {{pem 12 "example-platform-root-new"}}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: broken, namespace: argocd}
spec:
  source:
    helm:
      values: |
        a: [
        -----BEGIN CERTIFICATE-----
        AAAA
`))
	require.Equal(t, []string{
		"HelmRelease linkerd/linkerd-control-plane spec.values:identityTrustAnchorsPEM root.linkerd.cluster.local place=5 name=identityTrustAnchorsPEM",
		"HelmRelease linkerd/linkerd-control-plane spec.values:identity.issuer.tls.crtPEM identity.linkerd.cluster.local place=5 name=crtPEM",
		"HelmRelease linkerd/linkerd-control-plane spec.values:meshConfig.caCertificates[0].pem Root CA place=5 name=pem",
		"Application argocd/mesh spec.source.helm.values:identityTrustAnchorsPEM root.linkerd.cluster.local place=5 name=identityTrustAnchorsPEM",
		"Application argocd/mesh spec.source.helm.valuesObject:proxyInjector.caBundle platform-root-ca place=5 name=caBundle",
		"Application argocd/mesh spec.source.helm.parameters:identity.externalCA.anchor Root CA place=5 name=anchor",
		"Application argocd/mesh spec.sources[name=crds].helm.valuesObject:trust[name=corp].pem platform-root-ca place=5 name=pem",
	}, placed(inv))
	onlyProblem(t, inv, "spec.source.helm.values")
	require.Contains(t, inv.Problems[0].Message, "not YAML")
}

// TestScanAllReadsBase64OfABundleWithAComment: a value that is base64 of
// a CA bundle whose armour does not begin it - curl's bundle opens with
// comment lines, a file may open with a blank line - holds the bundle's
// certificates as base64 of bare PEM does. The prefix inventory once
// matched ("-----BEGIN" encoded at the start) missed both; pki's armour
// forms, at every alignment, find them.
func TestScanAllReadsBase64OfABundleWithAComment(t *testing.T) {
	pem := string(testpki.Fixture("example-platform-root-old").PEM())
	commented := base64.StdEncoding.EncodeToString([]byte("##\n## Bundle of CA Root Certificates\n##\n\n" + pem))
	blank := base64.StdEncoding.EncodeToString([]byte("\n" + pem))
	inv := inventory.ScanAll(testitems.Items(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: apps}
spec:
  template:
    spec:
      containers:
      - name: web
        env:
        - name: CA_BUNDLE
          value: %s
        - name: NOT_BASE64
          value: "bundle: %s"
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: platform, namespace: apps}
spec:
  values:
    caBundle: %s
`, commented, commented, blank)))
	require.Equal(t, []string{
		"Deployment apps/web spec.template.spec.containers[name=web].env[name=CA_BUNDLE].value platform-root-ca place=4 name=CA_BUNDLE",
		"HelmRelease apps/platform spec.values:caBundle platform-root-ca place=5 name=caBundle",
	}, placed(inv), "base64 of a bundle with a comment or a blank line first; text that only quotes base64 is no value of it")
	require.Empty(t, inv.Problems)
}

func TestScanArgoCDClusterSecret(t *testing.T) {
	items := testitems.Items(t, layouts.ArgoCDCluster(testpki.Fixture("signer-b-1"), testpki.Fixture("kube-admin"))+`---
apiVersion: v1
kind: Secret
metadata: {name: broken-cluster, namespace: argocd}
stringData:
  config: '{"tlsClientConfig": {"caData": "not base64!"}}'
`)
	for _, inv := range []*inventory.Inventory{inventory.Scan(items), inventory.ScanAll(items)} {
		require.Equal(t, []string{
			"Secret argocd/prod-cluster stringData.config:tlsClientConfig.caData signer-b-1 place=2 name=",
			"Secret argocd/prod-cluster stringData.config:tlsClientConfig.certData kube-admin place=3 name=",
		}, placed(inv), "a Secret value like a kubeconfig: read by every scan")
		onlyProblem(t, inv, "stringData.config:tlsClientConfig.caData")
	}
}
