package diff

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// resultAt runs the diff of base and head verified at now, as JSON.
func (r *testRepo) resultAt(base, head string, now time.Time) (trustdiff.Result, exit.Code) {
	r.t.Helper()
	var out, errb bytes.Buffer
	o := Options{Base: Side{Rev: base}, Head: Side{Rev: head}, Dir: r.dir, Now: now, Format: "json"}
	err := Run(o, &out, exit.NewPrinter(&errb, "rotate-certs diff"))
	var res trustdiff.Result
	if jerr := json.Unmarshal(out.Bytes(), &res); jerr != nil {
		r.t.Fatalf("decoding %q: %v (stderr %s)", out.String(), jerr, errb.String())
	}
	return res, exit.CodeOf(err)
}

// A leaf that has expired is no break, whatever its place holds beside
// it. cert-manager's CA issuer writes tls.crt as the leaf and then its
// issuer; a place's certificate at BASE is the one at the same position,
// so the valid issuer after an expired leaf does not make the leaf one
// that verified at BASE. At a --now after the leaf expired, diff A A
// listed the leaf as a break (its place's issuer verified), and so did a
// change that only pre-distributes the next root.
func TestExpiredLeafBesideItsIssuerIsNoBreak(t *testing.T) {
	root := testpki.NewSubjectCA("diff-expiry-root", "platform-root-ca", testpki.Date(2026, 1, 1), testpki.Days(3650))
	next := testpki.NewSubjectCA("diff-expiry-root-next", "platform-root-ca", testpki.Date(2026, 11, 1), testpki.Days(3650))
	issuer := testpki.NewIntermediate("diff-expiry-issuing", "platform-issuing-ca", root, testpki.Date(2026, 1, 1), testpki.Days(1000))
	leaf := testpki.NewLeaf("diff-expiry-leaf", issuer, testpki.Date(2026, 10, 1), testpki.Days(90))
	later := testpki.Date(2027, 3, 1) // the leaf expired on 2026-12-30; the issuer and the roots are valid
	r := newRepo(t)
	base := r.commit(map[string]string{
		"app/trust.yaml": configMap("billing", "platform-trust", map[string]string{"ca.crt": pem(root)}),
		"app/tls.yaml":   secret("billing", "billing-api-tls", map[string]string{"tls.crt": pem(leaf, issuer), "ca.crt": pem(root)}),
		"app/api.yaml":   deployment("billing", "billing-api", "ConfigMap", "platform-trust", "volume", ""),
		"app/root.yaml":  secret("cert-manager", "platform-root-ca", map[string]string{"tls.crt": pem(next)}), // renewed
	})
	head := r.commit(map[string]string{"app/trust.yaml": configMap("billing", "platform-trust", map[string]string{"ca.crt": pem(root, next)})})
	for _, tc := range []struct{ name, base, head string }{{"diff A A", base, base}, {"next root pre-distributed", base, head}} {
		t.Run(tc.name, func(t *testing.T) {
			res, code := r.resultAt(tc.base, tc.head, later)
			if code != exit.OK || len(res.Breaks) != 0 {
				t.Fatalf("exit %d, breaks %+v, planted %+v: the expired leaf verified at neither side", code, res.Breaks, res.Planted)
			}
		})
	}
	// Before it expired, the same leaf, its issuer re-issued from a root
	// the trust does not hold, is a break.
	other := testpki.NewSubjectCA("diff-expiry-other", "platform-root-ca", testpki.Date(2026, 11, 1), testpki.Days(3650))
	reissued := testpki.NewIntermediate("diff-expiry-issuing-2", "platform-issuing-ca", other, testpki.Date(2026, 11, 1), testpki.Days(1000))
	moved := r.commit(map[string]string{"app/tls.yaml": secret("billing", "billing-api-tls", map[string]string{"tls.crt": pem(testpki.NewLeaf("diff-expiry-leaf-2", reissued, testpki.Date(2026, 11, 1), testpki.Days(90)), reissued)})})
	if res, code := r.resultAt(head, moved, testpki.GoldenNow); code != exit.Failed || len(res.Breaks) != 2 {
		t.Fatalf("exit %d, breaks %+v: want the re-issued leaf and issuer", code, res.Breaks)
	}
}
