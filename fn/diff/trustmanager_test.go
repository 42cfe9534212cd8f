package diff

import (
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// corpBundle is a trust-manager Bundle as cert-manager's docs write one:
// the default CAs and cert-manager's self-signed root Secret, written to
// a ConfigMap of the Bundle's name in every namespace.
const corpBundle = `apiVersion: trust.cert-manager.io/v1alpha1
kind: Bundle
metadata:
  name: corp-trust
spec:
  sources:
  - useDefaultCAs: true
  - secret:
      name: corp-root-ca
      key: ca.crt
  target:
    configMap:
      key: trust-bundle.pem
`

// corpRoot is cert-manager's self-signed root Secret in the trust
// namespace.
func corpRoot(ca testpki.Cert) string {
	return secret("cert-manager", "corp-root-ca", map[string]string{"ca.crt": pem(ca), "tls.crt": pem(ca), "tls.key": string(ca.KeyPEM())})
}

// A trust-manager Bundle's trust is what trust-manager writes from its
// sources: cert-manager re-issuing the root of a Secret the Bundle reads
// changes the trust of every workload that reads the Bundle's ConfigMap,
// in a repository with no policy. Before, the change was the Secret's
// alone, read by nothing: PASS, exit 0, with the client's leaf of the old
// root rejected by checkout.
func TestTrustManagerSourceRootReplaced(t *testing.T) {
	r := newRepo(t)
	base := r.commit(map[string]string{
		"tm/bundle.yaml": corpBundle,
		"tm/root.yaml":   corpRoot(caOld),
		"tm/app.yaml":    deployment("shop", "checkout", "ConfigMap", "corp-trust", "subPath", "trust-bundle.pem"),
		"tm/client.yaml": secret("shop", "client", map[string]string{"tls.crt": pem(leafOld)}),
	})
	head := r.commit(map[string]string{"tm/root.yaml": corpRoot(caNew)})
	res, code := r.result(base, head)
	if code != exit.Failed {
		t.Fatalf("exit %d, want %d: %+v", code, exit.Failed, res)
	}
	tc := findTrust(t, res, "corp-trust")
	if tc.Field != "spec.sources" || readerNames(tc.Readers) != "checkout" {
		t.Errorf("trust change %+v, want the Bundle's sources read by checkout", tc)
	}
	for sign, sha := range map[string]string{"+": shaOf(caNew), "-": shaOf(caOld)} {
		if why, source := whyOf(t, res, "corp-trust", sign, sha); why != trustdiff.WhySource || source != "Secret cert-manager/corp-root-ca data.ca.crt" {
			t.Errorf("%s %s: %s (%s), want source from the root Secret", sign, sha[:12], why, source)
		}
	}
	if len(res.Breaks) != 1 || res.Breaks[0].Certificate.Resource.Name != "client" || res.Breaks[0].Trust.Resource.Name != "corp-trust" ||
		res.Breaks[0].Needs.SHA256 != shaOf(caOld) {
		t.Errorf("breaks %+v, want the client's leaf against the Bundle", res.Breaks)
	}
	// The Bundle holds the new root because the Secret does: it is no
	// other holder of the Secret's CA.
	for _, c := range findTrust(t, res, "corp-root-ca").Added {
		if strings.Contains(c.Provenance, "Bundle") || strings.Contains(c.Provenance, "more") {
			t.Errorf("the root Secret's CA %s: %q names the Bundle as another holder", c.SHA256[:12], c.Provenance)
		}
	}
	// Trusting both roots (the old one pinned inLine, as a render keeps
	// it) breaks nothing, and the Bundle plants nothing: its new root is
	// its source's.
	pinned := strings.Replace(corpBundle, "  target:", "  - inLine: |\n"+indent(pem(caOld), "      ")+"  target:", 1)
	res, _ = r.result(base, r.commit(map[string]string{"tm/bundle.yaml": pinned}))
	if len(res.Breaks) != 0 || slices.ContainsFunc(res.Planted, func(p trustdiff.Planted) bool { return p.Resource.Name == "corp-trust" }) {
		t.Errorf("breaks %+v, planted %+v", res.Breaks, res.Planted)
	}
}

// indent prefixes every line of s with p.
func indent(s, p string) string {
	return p + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+p) + "\n"
}

// examples/trust-manager: the render pins the re-issued root, which the
// snapshot of the root Secret already gives trust-manager, in rotate-certs'
// own inLine source beside the old one. What trust-manager writes does not
// change - the union of the sources held both roots before the render -
// and nothing breaks or is planted. A hand edit that drops the pinned old
// root is a change of the Bundle's trust, with the old root removed.
func TestTrustManagerRenderIsExplained(t *testing.T) {
	r := newRepo(t)
	base := r.commit(example(t, "trust-manager", "tm"))
	r.render("tm")
	rendered := r.commit(nil)
	res, code := r.result(base, rendered)
	if code != exit.OK || len(res.Trust)+len(res.Breaks)+len(res.Planted) != 0 {
		t.Fatalf("exit %d, trust %+v, breaks %+v, planted %+v", code, res.Trust, res.Breaks, res.Planted)
	}
	bundle := r.git("show", rendered+":tm/bundle.yaml")
	i := strings.Index(bundle, "  - inLine: |")
	j := strings.Index(bundle, "  target:")
	if i < 0 || j < i {
		t.Fatalf("no inLine source in the rendered Bundle:\n%s", bundle)
	}
	res, _ = r.result(rendered, r.commit(map[string]string{"tm/bundle.yaml": bundle[:i] + bundle[j:]}))
	tc := findTrust(t, res, "corp-trust")
	if tc.Field != "spec.sources" || len(tc.Removed) != 1 || len(tc.Added) != 0 {
		t.Errorf("trust change %+v, want the old root removed from the Bundle's sources", tc)
	}
}
