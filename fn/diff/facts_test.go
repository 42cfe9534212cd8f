package diff

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// webhook is a validating webhook whose caBundle holds cas.
func webhook(cas ...testpki.Cert) string {
	return "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: policy-webhook\nwebhooks:\n- name: validate.example.com\n  clientConfig:\n    caBundle: " +
		b64(pem(cas...)) + "\n    service: {name: webhook, namespace: policy}\n"
}

// What a reviewer needs, through the command over two commits: an expired
// CA added to a caBundle (explained: its own Secret held it at BASE), a
// private key committed in a ConfigMap, a SHA-1 leaf presented. Warnings:
// the exit status stays 0, every format says them, none echoes the key.
func TestFactsThroughTheGate(t *testing.T) {
	expired := testpki.Fixture("ca-expired")
	sha1CA := testpki.NewSHA1CA("legacy-ca", testpki.Date(2020, 1, 1), testpki.Days(3650))
	sha1Leaf := testpki.NewSHA1Leaf("legacy.policy.svc", sha1CA, testpki.Date(2026, 6, 1), testpki.Days(365))
	key := string(leafOld.KeyPEM())
	r := newRepo(t)
	base := r.commit(map[string]string{"hook.yaml": webhook(caOld),
		"old-root.yaml": secret("policy", "old-root", map[string]string{"tls.crt": pem(expired)})})
	head := r.commit(map[string]string{"hook.yaml": webhook(caOld, expired),
		"app/config.yaml": configMap("app", "settings", map[string]string{"server.key": key}),
		"legacy.yaml":     secret("policy", "legacy-tls", map[string]string{"tls.crt": string(sha1Leaf.PEM())})})
	res, code := r.result(base, head)
	if code != exit.OK || len(res.Planted)+len(res.Breaks) != 0 {
		t.Fatalf("exit %d, planted %+v, breaks %+v: warnings leave the exit status as it is", code, res.Planted, res.Breaks)
	}
	want := map[string]string{
		trustdiff.FactExpired:           "ValidatingWebhookConfiguration policy-webhook webhooks[name=validate.example.com].clientConfig.caBundle hook.yaml",
		trustdiff.FactPrivateKey:        "ConfigMap app/settings data.server.key app/config.yaml",
		trustdiff.FactRejectedSignature: "Secret policy/legacy-tls data.tls.crt legacy.yaml",
	}
	if len(res.Facts) != len(want) || res.Summary.Facts != len(want) {
		t.Fatalf("facts %+v, want %d", res.Facts, len(want))
	}
	for _, f := range res.Facts {
		if got := f.Resource.String() + " " + f.Field + " " + f.Resource.File; got != want[f.Kind] {
			t.Errorf("%s names %q, want %q", f.Kind, got, want[f.Kind])
		}
	}
	body := strings.Split(strings.TrimSpace(key), "\n")[1]
	for _, format := range []string{"table", "markdown", "json"} {
		out, stderr, code := r.diff(base, head, format, false)
		if code != exit.OK {
			t.Errorf("-o %s: exit %d", format, code)
		}
		if strings.Contains(out+stderr, body) || strings.Contains(out+stderr, "PRIVATE KEY") || strings.Contains(out+stderr, b64(key)[:40]) {
			t.Fatalf("-o %s echoes the key:\n%s%s", format, out, stderr)
		}
		if format != "json" && (!strings.Contains(out, "PASS with warnings") || !strings.Contains(out, "ConfigMap app/settings data.server.key: holds private key material") || !strings.Contains(out, "(in app/config.yaml)")) {
			t.Errorf("-o %s does not say the warnings:\n%s", format, out)
		}
	}
}

// A CA pasted into a caBundle together with a Secret that holds it, new
// in the same change in another namespace, is planted, and the words name
// that Secret as new.
func TestSecretAddedWithItsCAExplainsNothing(t *testing.T) {
	r := newRepo(t)
	base := r.commit(map[string]string{"hook.yaml": webhook(caOld)})
	head := r.commit(map[string]string{"hook.yaml": webhook(caOld, attacker),
		"elsewhere/ca.yaml": secret("kube-system", "innocuous", map[string]string{"tls.crt": pem(attacker)})})
	res, code := r.result(base, head)
	if code != exit.Failed || len(res.Planted) != 1 ||
		!strings.Contains(res.Planted[0].Reason, "introduced with Secret kube-system/innocuous data.tls.crt, also new in this change") {
		t.Fatalf("exit %d, planted %+v", code, res.Planted)
	}
	out, _, _ := r.diff(base, head, "table", false)
	if strings.Contains(out, "no source holds it") || !strings.Contains(out, "unexplained (introduced with Secret kube-system/innocuous data.tls.crt, also new in this change)") {
		t.Errorf("table:\n%s", out)
	}
	// Committed first, the Secret explains the CA the next change adds.
	next := r.commit(map[string]string{"hook.yaml": webhook(caOld, attacker, caNew), "elsewhere/ca2.yaml": secret("kube-system", "next", map[string]string{"tls.crt": pem(caNew)})})
	staged := r.commit(map[string]string{"hook.yaml": webhook(caOld, caNew)})
	if res, code := r.result(next, staged); code != exit.OK || len(res.Planted) != 0 {
		t.Errorf("a CA whose Secret was committed before: exit %d, planted %+v", code, res.Planted)
	}
}

// With a policy, a CA of its target that no rule puts there is no more
// explained by a Secret the same change adds beside it than without one.
func TestPolicyTargetPastedWithItsSecret(t *testing.T) {
	r := newRepo(t)
	files := gatewayTree(caOld, leafOld, caOld)
	files["gw/policy.yaml"] = gatewayPolicy
	base := r.commit(files)
	head := r.commit(map[string]string{"gw/trust.yaml": gatewayTree(caOld, leafOld, caOld, attacker)["gw/trust.yaml"],
		"partner/ca.yaml": secret("partner", "partner-ca", map[string]string{"tls.crt": pem(attacker)})})
	res, code := r.result(base, head)
	want := "in data at HEAD, introduced with Secret partner/partner-ca data.tls.crt, also new in this change: what gains a CA in the same change does not explain it"
	if code != exit.Failed || len(res.Planted) != 1 || res.Planted[0].Reason != want {
		t.Fatalf("exit %d, planted %+v", code, res.Planted)
	}
	if tc := findTrust(t, res, "envoy-gateway-trust"); tc.Bundle != "gateway" || len(tc.Added) != 1 || tc.Added[0].Why != trustdiff.WhyUnexplained {
		t.Errorf("trust change %+v", tc)
	}
}
