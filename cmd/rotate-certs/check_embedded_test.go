package main

import (
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/rotate-certs/rotate-certs/internal/testpki/layouts"
	"github.com/stretchr/testify/require"
)

// TestCheckEmbeddedValues: check lists the certificates held in a pod
// template's env value (linkerd inject's anchors), in a HelmRelease's
// values and in an Argo CD cluster Secret's config, each at its field and
// the path inside the value, and never prints the keys beside them.
func TestCheckEmbeddedValues(t *testing.T) {
	issuer := testpki.Fixture("leaf-old")
	in := layouts.LinkerdInjected("web", testpki.Fixture("example-linkerd-anchor-old")) + "---\n" +
		layouts.LinkerdValues{Anchors: []testpki.Cert{testpki.Fixture("example-linkerd-anchor-old")}, Issuer: &issuer, IssuerKey: true}.HelmRelease() + "---\n" +
		layouts.ArgoCDCluster(testpki.Fixture("signer-b-1"), testpki.Fixture("kube-admin"))
	out, stderr, code := runCLI(t, in, "check", "-", "--now", checkNow)
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
	out, _, _ = runCLI(t, in, "check", "-", "--now", checkNow, "-o", "json")
	require.Equal(t, 5, parseJSON(t, out).Summary.Certificates)
	requireNoKeyMaterial(t, out)
}
