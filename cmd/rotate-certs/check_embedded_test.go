package main

import (
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// TestCheckEmbeddedValues: check lists the certificates held in a pod
// template's env value (linkerd inject's anchors), in a HelmRelease's
// values and in an Argo CD cluster Secret's config, each at its field and
// the path inside the value, and never prints the keys beside them.
func TestCheckEmbeddedValues(t *testing.T) {
	config := fmt.Sprintf(`{"tlsClientConfig": {"caData": %q, "certData": %q, "keyData": %q}}`,
		testpki.B64("signer-b-1"), testpki.B64("kube-admin"), base64.StdEncoding.EncodeToString(testpki.Fixture("kube-admin").KeyPEM()))
	in, err := testpki.ExpandTemplate("embedded", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: emojivoto}
spec:
  template:
    spec:
      initContainers:
      - name: linkerd-proxy
        restartPolicy: Always
        env:
        - name: LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS
          value: |
            {{pem 12 "example-linkerd-anchor-old"}}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: linkerd-control-plane, namespace: linkerd}
spec:
  values:
    identityTrustAnchorsPEM: |
      {{pem 6 "example-linkerd-anchor-old"}}
    identity:
      issuer:
        tls:
          crtPEM: |
            {{pem 12 "leaf-old"}}
          keyPEM: |
            {{key 12 "leaf-old"}}
---
apiVersion: v1
kind: Secret
metadata:
  name: prod-cluster
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: cluster}
stringData:
  config: '`+config+`'
`)
	require.NoError(t, err)
	out, stderr, code := runCLI(t, string(in), "check", "-", "--now", checkNow)
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{
		"Deployment emojivoto/web",
		"spec.template.spec.initContainers[name=linkerd-proxy].env[name=LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS].value",
		"spec.values:identityTrustAnchorsPEM",
		"spec.values:identity.issuer.tls.crtPEM",
		"stringData.config:tlsClientConfig.caData",
		"stringData.config:tlsClientConfig.certData",
	} {
		require.Contains(t, out, want)
	}
	requireNoKeyMaterial(t, out+stderr)
	out, _, _ = runCLI(t, string(in), "check", "-", "--now", checkNow, "-o", "json")
	require.Equal(t, 5, parseJSON(t, out).Summary.Certificates)
	requireNoKeyMaterial(t, out)
}
