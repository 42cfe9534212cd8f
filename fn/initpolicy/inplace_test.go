package initpolicy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

var (
	anchorOld = testpki.NewSubjectCA("anchor-old", "root.linkerd.cluster.local", day0, testpki.Days(3650))
	anchorNew = testpki.NewSubjectCA("anchor-new", "root.linkerd.cluster.local", day0.Add(testpki.Days(30)), testpki.Days(3650))
	otherRoot = testpki.NewCA("other-root", day0, testpki.Days(3650))
)

// trustRoots is Linkerd's trust anchors ConfigMap holding pem.
func trustRoots(pem []byte) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: linkerd-identity-trust-roots\n  namespace: linkerd\ndata:\n  ca-bundle.crt: |\n" + indented(pem, 4) + "\n"
}

// caSecret is a Secret holding pem at ca.crt.
func caSecret(name, namespace string, pem []byte) string {
	return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n  namespace: " + namespace + "\ndata:\n  ca.crt: " + b64(pem) + "\n"
}

// istioRootCert is the istio-ca-root-cert ConfigMap istiod writes into
// namespace ns, holding pem.
func istioRootCert(ns string, pem []byte) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: istio-ca-root-cert\n  namespace: " + ns + "\ndata:\n  root-cert.pem: |\n" + indented(pem, 4) + "\n"
}

// cacerts is Istio's plug-in CA Secret with pem as its root-cert.pem.
func cacerts(pem []byte) string {
	return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cacerts\n  namespace: istio-system\ndata:\n  root-cert.pem: " + b64(pem) + "\n"
}

// TestScanWiredTargets: what decides that a target is already wired, and
// what does not.
func TestScanWiredTargets(t *testing.T) {
	bundle := func(sources string) string {
		return "apiVersion: trust.cert-manager.io/v1alpha1\nkind: Bundle\nmetadata:\n  name: corp\nspec:\n  sources:\n" + sources + "  target:\n    configMap: {key: ca.crt}\n"
	}
	for _, c := range []struct {
		name, input string
		// targets are "bundle: Kind namespace/name key trustNamespace", one
		// per bundle; note is in the notes.
		targets []string
		note    string
	}{
		{
			name:    "the anchors' source is a newer CA of the same name",
			input:   trustRoots(anchorOld.PEM()) + "---\n" + caSecret("linkerd-trust-anchor", "linkerd", anchorNew.PEM()),
			targets: []string{"linkerd-identity-trust-roots: ConfigMap linkerd/linkerd-identity-trust-roots ca-bundle.crt "},
		},
		{
			name:    "the anchors' source holds the same CA",
			input:   caSecret("anchor", "linkerd", anchorOld.PEM()) + "---\n" + trustRoots(anchorOld.PEM()),
			targets: []string{"linkerd-identity-trust-roots: ConfigMap linkerd/linkerd-identity-trust-roots ca-bundle.crt "},
		},
		{
			name:    "no source feeds the anchors: they stay a source, with a note",
			input:   trustRoots(anchorOld.PEM()) + "---\n" + caSecret("other", "linkerd", otherRoot.PEM()),
			targets: []string{"linkerd-identity-trust-roots: ConfigMap linkerd/linkerd-identity-trust-roots-trust ca-bundle.crt ", "other: Secret linkerd/other-trust ca.crt "},
			note:    "no other Secret or ConfigMap in the input holds its CA",
		},
		{
			name: "a Bundle that writes the anchors leaves them to it",
			input: trustRoots(anchorOld.PEM()) + "---\n" + caSecret("linkerd-identity-trust-roots", "cert-manager", anchorNew.PEM()) + "---\n" +
				"apiVersion: trust.cert-manager.io/v1alpha1\nkind: Bundle\nmetadata:\n  name: linkerd-identity-trust-roots\nspec:\n  sources:\n  - secret: {name: linkerd-identity-trust-roots, key: ca.crt}\n  target:\n    configMap: {key: ca-bundle.crt}\n",
			targets: []string{"linkerd-identity-trust-roots: ConfigMap linkerd/linkerd-identity-trust-roots-trust ca-bundle.crt ", "linkerd-identity-trust-roots-2: Bundle /linkerd-identity-trust-roots  "},
		},
		{
			name:    "a Bundle reading two sources outside cert-manager is one bundle with trustNamespace",
			input:   caSecret("a", "trust", anchorOld.PEM()) + "---\n" + caSecret("b", "trust", otherRoot.PEM()) + "---\n" + bundle("  - secret: {name: a, key: ca.crt}\n  - configMap: {name: unrelated, key: x}\n  - secret: {name: b, key: ca.crt}\n"),
			targets: []string{"corp: Bundle /corp  trust"},
			note:    "trust-manager Bundle corp also reads ConfigMap trust/unrelated, which is not in the input: a render of the Bundle needs it",
		},
		{
			name:    "istiod's istio-ca-root-cert is neither target nor source: cacerts is asked for",
			input:   istioRootCert("shop", rootCA.PEM()) + "---\n" + istioRootCert("web", rootCA.PEM()) + "---\n" + caSecret("root", "istio-system", rootCA.PEM()),
			targets: []string{"root: Secret istio-system/root-trust ca.crt "},
			note:    "ConfigMap istio-ca-root-cert key root-cert.pem (in shop, web) is what istiod writes into every namespace from the roots of its CA, overwriting any other value (kept in git, the sync tool and istiod fight over it): proposed neither as a target nor as a source; add Istio's plug-in CA, Secret istio-system/cacerts (or its snapshot: rotate-certs snapshot), to the input",
		},
		{
			name:    "with cacerts in the input, cacerts is the target and istio-ca-root-cert is left to istiod",
			input:   istioRootCert("shop", rootCA.PEM()) + "---\n" + cacerts(rootCA.PEM()) + "---\n" + caSecret("root", "istio-system", rootCA.PEM()),
			targets: []string{"cacerts: Secret istio-system/cacerts root-cert.pem "},
			note:    "proposed neither as a target nor as a source; Istio's trust is rotated in its plug-in CA, Secret cacerts key root-cert.pem, from which istiod writes them",
		},
		{
			name:    "a Bundle reading no source is not a target",
			input:   caSecret("a", "trust", anchorOld.PEM()) + "---\n" + bundle("  - useDefaultCAs: true\n"),
			targets: []string{"a: Secret trust/a-trust ca.crt "},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan, err := Propose(parseAll(t, c.input), day0.Add(testpki.Days(60)))
			require.NoError(t, err)
			var got []string
			for _, b := range plan.Bundles {
				got = append(got, b.Name+": "+b.TargetKind+" "+b.TargetNamespace+"/"+b.TargetName+" "+b.TargetKey+" "+b.trustNamespace)
			}
			require.Equal(t, c.targets, got)
			require.Contains(t, strings.Join(plan.Notes, "\n"), c.note)
			_, err = plan.YAML("")
			require.NoError(t, err, "the policy decodes and validates")
		})
	}
}
