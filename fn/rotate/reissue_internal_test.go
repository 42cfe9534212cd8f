package rotate

import (
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestReissueCommandQuotesOnlyNames: the re-issue list's `cmctl renew`
// line is built from a Secret's namespace and its
// cert-manager.io/certificate-name annotation, both from the input (a pull
// request may write them). Only Kubernetes names are quoted into it: a
// value that a shell or cmctl would read as a flag, a second word or a
// path gives no command and no Certificate.
func TestReissueCommandQuotesOnlyNames(t *testing.T) {
	ca := testpki.NewCA("reissue-cmd-ca", testpki.Date(2026, 1, 1), testpki.Days(365))
	leaf := testpki.NewLeaf("reissue-cmd-leaf", ca, testpki.Date(2026, 1, 1), testpki.Days(90))
	for _, tc := range []struct {
		name, namespace, certificate string
		want                         string
	}{
		{"a name", "istio-system", "istiod", "cmctl renew -n istio-system istiod"},
		{"a dotted name", "apps", "web.example.com", "cmctl renew -n apps web.example.com"},
		{"a flag for a name", "apps", "-x", ""},
		{"a long flag for a name", "apps", "--kubeconfig=/tmp/k", ""},
		{"two words", "apps", "web other", ""},
		{"upper case", "apps", "Web", ""},
		{"a flag for a namespace", "--all-namespaces", "web", ""},
		{"a dotted namespace", "a.b", "web", ""},
		{"no namespace", "", "web", ""},
		{"no annotation", "apps", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secret := yaml.MustParse("apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\n")
			require.NoError(t, secret.SetNamespace(tc.namespace))
			if tc.certificate != "" {
				require.NoError(t, secret.SetAnnotations(map[string]string{"cert-manager.io/certificate-name": tc.certificate}))
			}
			r := &run{items: []*yaml.RNode{secret}, now: testpki.Date(2026, 2, 1)}
			f := inventory.Found{Ref: kube.Ref{APIVersion: "v1", Kind: "Secret", Namespace: tc.namespace, Name: "tls"}, Cert: leaf.Cert}
			e := r.reissueEntry("mesh", f, anchors.Reissue{IssuerName: "reissue-cmd-ca", LeavesAt: testpki.Date(2026, 6, 1)})
			require.Equal(t, tc.want, e.Command)
			if tc.want == "" {
				require.Empty(t, e.Certificate)
			} else {
				require.Equal(t, tc.namespace+"/"+tc.certificate, e.Certificate)
			}
		})
	}
}
