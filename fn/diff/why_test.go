package diff

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// copyPolicy is gatewayPolicy in Copy mode.
var copyPolicy = strings.Replace(gatewayPolicy, "    target:", "    mode: Copy\n    target:", 1)

// whyOf returns the why and source of CA sha in the change of trust object
// name, added ("+"), removed ("-") or kept ("=").
func whyOf(t *testing.T, res trustdiff.Result, name, sign, sha string) (string, string) {
	t.Helper()
	tc := findTrust(t, res, name)
	cas := map[string][]trustdiff.CA{"+": tc.Added, "-": tc.Removed, "=": tc.Kept}[sign]
	for _, c := range cas {
		if c.SHA256 == sha {
			return c.Why, c.Source
		}
	}
	t.Fatalf("%s %s: no CA %s in %+v", name, sign, sha, cas)
	return "", ""
}

// A switch from Copy back to Bundle mode restores the previous CA from
// the memory a Copy-mode render kept (rotate-certs.dev/previous): the
// render says so, and so does diff - restored, not planted. Before, HEAD's
// explanation (the CA is in its data: carried) did not explain a CA the
// data did not hold at BASE, and it was planted. A CA the memory did not
// hold is still planted.
func TestCopyToBundleRestoresFromMemory(t *testing.T) {
	r := newRepo(t)
	files := gatewayTree(caOld, leafOld, caOld)
	files["gw/rotation-policy.yaml"] = copyPolicy
	r.commit(files)
	r.commit(map[string]string{"gw/gateway-ca.yaml": gatewayTree(caNew, leafNew)["gw/gateway-ca.yaml"]})
	r.render("gw") // Copy: the trust holds the new CA only, the old one in memory
	base := r.commit(nil)
	if text := r.git("show", base+":gw/trust.yaml"); !strings.Contains(text, "rotate-certs.dev/previous") {
		t.Fatalf("the Copy-mode render kept no memory:\n%s", text)
	}
	r.commit(map[string]string{"gw/rotation-policy.yaml": gatewayPolicy})
	r.render("gw") // Bundle: the old CA comes back
	head := r.commit(nil)
	res, code := r.result(base, head)
	if code != exit.OK || len(res.Planted) != 0 {
		t.Fatalf("exit %d, planted %+v", code, res.Planted)
	}
	if why, source := whyOf(t, res, "envoy-gateway-trust", "+", shaOf(caOld)); why != trustdiff.WhyRestored || !strings.Contains(source, "rotate-certs.dev/previous") {
		t.Errorf("the old CA is %s (%s), want restored from the memory", why, source)
	}
	// The same switch with another CA pasted beside the restored one.
	trust := r.git("show", head+":gw/trust.yaml")
	pasted := strings.Replace(trust, b64(pem(caNew, caOld)), b64(pem(caNew, caOld, attacker)), 1)
	if pasted == trust {
		t.Fatalf("the rendered trust is not the new and the old CA:\n%s", trust)
	}
	res, code = r.result(base, r.commit(map[string]string{"gw/trust.yaml": pasted}))
	if code != exit.Failed || len(res.Planted) != 1 || res.Planted[0].SHA256 != shaOf(attacker) {
		t.Errorf("exit %d, planted %+v: want the pasted CA alone", code, res.Planted)
	}
}

// A policy's source that stages the next CA (its ca.crt the current and
// the next, as cert-manager's or a PKI team's bundle does) holds it as a
// source: why source, naming the bundle, and the render that adds it to
// the target is explained by it. Before, the source's own new CA was
// planted. A CA pasted into a Secret no policy reads is still planted.
func TestSourceStagingTheNextCAIsSource(t *testing.T) {
	next := testpki.Fixture("ca-2027") // not valid before 2026-12-01: pre-distributed
	r := newRepo(t)
	files := gatewayTree(caOld, leafOld, caOld)
	files["gw/rotation-policy.yaml"] = gatewayPolicy
	files["gw/other.yaml"] = secret(egNS, "other-ca", map[string]string{"ca.crt": pem(caOld)})
	base := r.commit(files)
	r.commit(map[string]string{
		"gw/gateway-ca.yaml": secret(egNS, "envoy-gateway", map[string]string{"ca.crt": pem(caOld, next), "tls.crt": pem(leafOld), "tls.key": string(leafOld.KeyPEM())}),
		"gw/other.yaml":      secret(egNS, "other-ca", map[string]string{"ca.crt": pem(caOld, attacker)}),
	})
	r.render("gw")
	res, code := r.result(base, r.commit(nil))
	if why, source := whyOf(t, res, "envoy-gateway", "+", shaOf(next)); why != trustdiff.WhySource || source != "a source of bundle gateway" {
		t.Errorf("the source's next CA is %s (%s), want source of bundle gateway", why, source)
	}
	if why, _ := whyOf(t, res, "envoy-gateway-trust", "+", shaOf(next)); why != trustdiff.WhySource {
		t.Errorf("the target's next CA is %s, want source", why)
	}
	if code != exit.Failed || len(res.Planted) != 1 || res.Planted[0].Resource.Name != "other-ca" {
		t.Errorf("exit %d, planted %+v: want only the CA pasted into the Secret no policy reads", code, res.Planted)
	}
}
