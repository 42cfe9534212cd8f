package trustdiff

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// factsOf returns the facts of r as "kind field subject-or-empty".
func factsOf(r Result) []string {
	var out []string
	for _, f := range r.Facts {
		out = append(out, f.Kind+" "+f.Resource.Name+" "+f.Field+" "+f.Subject)
	}
	return out
}

func sameList(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// CAs added or kept in a trust object the change touches that are
// expired or not yet valid at now are warnings; the same CAs in an object
// the change leaves alone are not mentioned.
func TestFactsCAValidity(t *testing.T) {
	caOld, caNew := testpki.Fixture("ca-2025"), testpki.Fixture("ca-2026")
	expired, early := testpki.Fixture("ca-expired"), testpki.Fixture("ca-2027") // expired 2025-01-01; valid from 2026-12-01
	one := func(cas ...testpki.Cert) string { return secretOf("a", "one", "ca.crt", cas) }
	two := func(cas ...testpki.Cert) string { return secretOf("a", "two", "ca.crt", cas) }
	cases := []struct {
		name, base, head string
		want             []string
	}{
		{"an expired CA added", one(caOld), one(caOld, expired), []string{"expired one data.ca.crt " + expired.Cert.Subject.String()}},
		{"an expired CA kept", one(expired), one(expired, caNew), []string{"expired one data.ca.crt " + expired.Cert.Subject.String()}},
		{"a CA not yet valid added", one(caOld), one(caOld, early), []string{"notYetValid one data.ca.crt " + early.Cert.Subject.String()}},
		{"an expired CA in an object the change leaves alone", docs(one(caOld), two(expired)), docs(one(caOld, caNew), two(expired)), nil},
		{"an expired CA removed", one(caOld, expired), one(caOld), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(model(tc.base), model(tc.head), fuzzNow)
			if got := factsOf(r); !sameList(got, tc.want) {
				t.Errorf("facts %q, want %q", got, tc.want)
			}
			if len(tc.want) > 0 && (r.Summary.Facts != len(tc.want) || !strings.Contains(Table(r, true), fmt.Sprintf("WARNINGS (%d):", len(tc.want)))) {
				t.Errorf("summary %+v, table:\n%s", r.Summary, Table(r, true))
			}
		})
	}
}

// Certificates whose signature algorithm crypto/x509 rejects: a SHA-1 CA
// added to trust, a SHA-1 leaf presented; a leaf presented at BASE
// already is not mentioned again.
func TestFactsRejectedSignature(t *testing.T) {
	caOld := testpki.Fixture("ca-2025")
	sha1CA := testpki.NewSHA1CA("legacy-ca", testpki.Date(2020, 1, 1), testpki.Days(3650))
	sha1Leaf := testpki.NewSHA1Leaf("legacy.svc", sha1CA, testpki.Date(2026, 6, 1), testpki.Days(365))
	enc := base64.StdEncoding.EncodeToString
	trust := func(extra ...[]byte) string {
		p := caOld.PEM()
		for _, e := range extra {
			p = append(p, e...)
		}
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: one, namespace: a}\ndata:\n  ca.crt: " + enc(p) + "\n"
	}
	serving := "apiVersion: v1\nkind: Secret\nmetadata: {name: legacy-tls, namespace: a}\ndata:\n  tls.crt: " + enc(sha1Leaf.PEM()) + "\n"
	subject := sha1CA.Cert.Subject.String()
	cases := []struct {
		name, base, head string
		want             []string
		words            string
	}{
		{"a SHA-1 root added to trust", trust(), trust(sha1CA.PEM()), []string{"rejectedSignature one data.ca.crt " + subject},
			"signed with ECDSA-SHA1, an insecure algorithm crypto/x509 rejects: Go trusts it as a root"},
		{"a SHA-1 leaf presented", trust(), docs(trust(), serving), []string{"rejectedSignature legacy-tls data.tls.crt CN=legacy.svc"},
			"a Go client refuses this certificate whatever it trusts"},
		{"a SHA-1 leaf presented at BASE already", docs(trust(), serving), docs(trust(sha1CA.PEM()), serving),
			[]string{"rejectedSignature one data.ca.crt " + subject}, "Go trusts it as a root"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(model(tc.base), model(tc.head), fuzzNow)
			if got := factsOf(r); !sameList(got, tc.want) {
				t.Fatalf("facts %q, want %q", got, tc.want)
			}
			if !strings.Contains(r.Facts[0].Message, tc.words) {
				t.Errorf("message %q, want %q", r.Facts[0].Message, tc.words)
			}
		})
	}
}

// hook is a validating webhook whose caBundle holds cas.
func hook(cas ...testpki.Cert) string {
	var p []byte
	for _, c := range cas {
		p = append(p, c.PEM()...)
	}
	return "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: policy\nwebhooks:\n- name: validate.example.com\n  clientConfig:\n    caBundle: " +
		base64.StdEncoding.EncodeToString(p) + "\n    service: {name: webhook, namespace: policy}\n"
}

// A certificate whose issuer name is its own subject and whose own key
// does not verify it (a re-keyed anchor cross-signed by the one it
// replaces) is presented, not a root: it needs its issuer, and dropping
// that issuer from the trust that verified it is a break.
func TestSameNameOtherKeyIsPresented(t *testing.T) {
	root, attacker := testpki.NewSubjectCA("facts-anchor-1", "root.example", testpki.Date(2026, 1, 1), testpki.Days(3650)), testpki.Fixture("attacker-ca")
	cross := testpki.NewCrossSigned("facts-anchor-2", root, testpki.Date(2026, 11, 1), testpki.Days(3650))
	held := secretOf("policy", "webhook-tls", "tls.crt", certs(cross))
	base, head := model(docs(hook(root), held)), model(docs(hook(attacker), held))
	if len(head.certs) != 1 || sha(head.certs[0].cert) != sha(cross.Cert) {
		t.Fatalf("certificates presented %+v, want the cross-signed anchor", head.certs)
	}
	r := Compare(base, head, fuzzNow)
	if len(r.Breaks) != 1 || r.Breaks[0].Certificate.Resource.Name != "webhook-tls" || r.Breaks[0].Needs.SHA256 != sha(root.Cert) {
		t.Fatalf("breaks %+v, want the cross-signed anchor needing the root the caBundle dropped", r.Breaks)
	}
	// A root that names itself and verifies with its own key stays a root.
	if tr := model(secretOf("a", "ca", "tls.crt", certs(root))); len(tr.certs) != 0 {
		t.Errorf("a self-signed root is presented: %+v", tr.certs)
	}
}

// Private key material where no key belongs is a warning naming the
// object and field, never the key; a Secret's key fields, and what a
// document inside a Secret's value holds, are where keys are kept.
func TestFactsPrivateKey(t *testing.T) {
	ca, leaf := testpki.Fixture("ca-2025"), testpki.Fixture("leaf-old")
	key := string(leaf.KeyPEM())
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	kubeconfig := "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    client-key-data: " + enc(key) + "\n"
	cases := []struct {
		name, object, field string // field "" when no warning
	}{
		{"a ConfigMap value", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: o, namespace: a}\ndata:\n  server.key: " + quoted(key) + "\n", "data.server.key"},
		{"a kubeconfig in a ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: o, namespace: a}\ndata:\n  config: " + quoted(kubeconfig) + "\n", "data.config"},
		{"a caBundle", "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: o}\nwebhooks:\n- name: v.example.com\n  clientConfig:\n    caBundle: " +
			enc(string(ca.PEM())+key) + "\n", "webhooks[name=v.example.com].clientConfig.caBundle"},
		{"an env value", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: o, namespace: a}\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: x\n        env:\n        - name: TLS_KEY\n          value: " +
			quoted(key) + "\n", "spec.template.spec.containers[name=app].env[name=TLS_KEY].value"},
		{"an annotation", "apiVersion: v1\nkind: Service\nmetadata:\n  name: o\n  namespace: a\n  annotations:\n    example.com/key: " + quoted(key) + "\n", "metadata.annotations[example.com/key]"},
		{"a Secret's stringData under a name not meant for a key", "apiVersion: v1\nkind: Secret\nmetadata: {name: o, namespace: a}\nstringData:\n  ca.crt: " + quoted(string(ca.PEM())+key) + "\n", "stringData.ca.crt"},
		{"a Secret's data under a name not meant for a key", "apiVersion: v1\nkind: Secret\nmetadata: {name: o, namespace: a}\ndata:\n  config.pem: " + enc(key) + "\n", "data.config.pem"},
		{"a custom resource's field", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: o, namespace: a}\nspec:\n  tls:\n    key: " + quoted(key) + "\n", "spec.tls.key"},
		{"a Secret's tls.key", "apiVersion: v1\nkind: Secret\nmetadata: {name: o, namespace: a}\ndata:\n  tls.key: " + enc(key) + "\n", ""},
		{"a Secret's stringData key.pem", "apiVersion: v1\nkind: Secret\nmetadata: {name: o, namespace: a}\nstringData:\n  key.pem: " + quoted(key) + "\n", ""},
		{"a Secret's ssh-privatekey", "apiVersion: v1\nkind: Secret\nmetadata: {name: o, namespace: a}\ntype: kubernetes.io/ssh-auth\ndata:\n  ssh-privatekey: " + enc(key) + "\n", ""},
		{"a kubeconfig in a Secret", "apiVersion: v1\nkind: Secret\nmetadata: {name: o, namespace: a}\ndata:\n  value: " + enc(kubeconfig) + "\n", ""},
		{"a ConfigMap of certificates", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: o, namespace: a}\ndata:\n  ca.crt: " + quoted(string(ca.PEM())) + "\n", ""},
	}
	body := strings.Split(strings.TrimSpace(key), "\n")[1]
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			empty := "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"
			r := Compare(model(empty), model(docs(empty, tc.object)), fuzzNow)
			var want []string
			if tc.field != "" {
				want = []string{"privateKey o " + tc.field + " "}
			}
			if got := factsOf(r); !sameList(got, want) {
				t.Fatalf("facts %q, want %q", got, want)
			}
			for _, out := range outputs(t, r) {
				if strings.Contains(string(out), body) || strings.Contains(string(out), "BEGIN") || strings.Contains(string(out), enc(key)[:40]) {
					t.Fatalf("output echoes the key:\n%s", out)
				}
			}
			if tc.field == "" {
				return
			}
			if !strings.Contains(Table(r, false), "o "+tc.field+": holds private key material") {
				t.Errorf("the table does not name the place:\n%s", Table(r, false))
			}
			if again := Compare(model(docs(empty, tc.object)), model(docs(empty, tc.object)), fuzzNow); len(again.Facts) != 0 {
				t.Errorf("a key BASE held at the same place is listed again: %+v", again.Facts)
			}
		})
	}
}

// Facts are warnings: the verdict says so and passes, the JSON lists
// them, the markdown opens them.
func TestFactsAreWarnings(t *testing.T) {
	caOld, expired := testpki.Fixture("ca-2025"), testpki.Fixture("ca-expired")
	own := secretOf("a", "old-ca", "tls.crt", certs(expired))
	r := Compare(model(docs(secretOf("a", "one", "ca.crt", certs(caOld)), own)), model(docs(secretOf("a", "one", "ca.crt", certs(caOld, expired)), own)), fuzzNow)
	if len(r.Planted)+len(r.Breaks) != 0 || len(r.Facts) != 1 {
		t.Fatalf("planted %+v, breaks %+v, facts %+v: want one warning", r.Planted, r.Breaks, r.Facts)
	}
	if v := r.verdictLine(false); !strings.HasPrefix(v, "PASS with warnings") {
		t.Errorf("verdict %q", v)
	}
	j, err := JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary struct{ Facts int }
		Facts   []struct{ Kind, Field, Message string }
	}
	if err := json.Unmarshal(j, &doc); err != nil || doc.Summary.Facts != 1 || len(doc.Facts) != 1 || doc.Facts[0].Kind != FactExpired || doc.Facts[0].Field != "data.ca.crt" {
		t.Errorf("JSON %s (%v)", j, err)
	}
	if md := Markdown(r, MarkdownOptions{}); !strings.Contains(md, "<details open><summary>Warnings (1)</summary>") {
		t.Errorf("markdown:\n%s", md)
	}
	if empty, _ := JSON(Compare(model(own), model(own), fuzzNow)); !strings.Contains(string(empty), `"facts": []`) {
		t.Errorf("no facts is not []: %s", empty)
	}
}
