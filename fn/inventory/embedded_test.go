package inventory_test

import (
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/internal/testitems"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
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

// The layout of `linkerd inject` output (linkerd/linkerd2 at b24cd40,
// cli/cmd/testdata/inject_emojivoto_deployment.golden.yml): the proxy is
// an init container with restartPolicy Always whose env holds the trust
// anchors as literal PEM; before native sidecars it was a container (the
// CronJob below). Our own certificates stand in for Linkerd's.
const injected = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: emojivoto}
spec:
  template:
    metadata:
      annotations: {linkerd.io/trust-root-sha256: 8dc603ab}
    spec:
      containers:
      - name: web-svc
        image: buoyantio/emojivoto-web:v10
        env:
        - {name: WEB_PORT, value: "80"}
      initContainers:
      - name: linkerd-init
        image: cr.l5d.io/linkerd/proxy
      - name: linkerd-proxy
        restartPolicy: Always
        env:
        - name: _pod_ns
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        - name: LINKERD2_PROXY_IDENTITY_DIR
          value: /var/run/linkerd/identity/end-entity
        - name: LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS
          value: |
            {{pem 12 "example-linkerd-anchor-old"}}
---
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

// onlyProblem requires inv's one problem to be at field, and to quote no
// key.
func onlyProblem(t *testing.T, inv *inventory.Inventory, field string) {
	t.Helper()
	require.Len(t, inv.Problems, 1)
	require.Equal(t, field, inv.Problems[0].Field)
	require.NotContains(t, inv.Problems[0].Message, "PRIVATE")
}

func TestScanAllReadsHelmValues(t *testing.T) {
	inv := inventory.ScanAll(testitems.Items(t, `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: linkerd-control-plane, namespace: linkerd}
spec:
  chart:
    spec: {chart: linkerd-control-plane, sourceRef: {kind: HelmRepository, name: linkerd}}
  values:
    identityTrustAnchorsPEM: |
      {{pem 6 "example-linkerd-anchor-old"}}
    identity:
      issuer:
        tls:
          crtPEM: |
            {{pem 12 "example-linkerd-issuer-old"}}
          keyPEM: |
            {{key 12 "example-linkerd-issuer-old"}}
    meshConfig:
      caCertificates:
      - pem: |
          {{pem 10 "example-istio-root-old"}}
---
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

func TestScanArgoCDClusterSecret(t *testing.T) {
	config := fmt.Sprintf(`{"bearerToken": "t0k3n", "tlsClientConfig": {"insecure": false, "caData": %q, "certData": %q, "keyData": %q}}`,
		testpki.B64("signer-b-1"), testpki.B64("kube-admin"), base64.StdEncoding.EncodeToString(testpki.Fixture("kube-admin").KeyPEM()))
	items := testitems.Items(t, `apiVersion: v1
kind: Secret
metadata:
  name: prod-cluster
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: cluster}
type: Opaque
stringData:
  name: prod
  server: https://prod.example:6443
  config: '`+config+`'
---
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
