package trustdiff

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// secretOf is a Secret in namespace ns whose data keys hold the PEM of
// the certificates given, keys in order.
func secretOf(ns, name string, data ...any) string {
	s := "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: " + ns + "}\ndata:\n"
	for i := 0; i+1 < len(data); i += 2 {
		var p []byte
		for _, c := range data[i+1].([]testpki.Cert) {
			p = append(p, c.PEM()...)
		}
		s += "  " + data[i].(string) + ": " + base64.StdEncoding.EncodeToString(p) + "\n"
	}
	return s
}

// certs is its arguments as a list, for secretOf.
func certs(cs ...testpki.Cert) []testpki.Cert { return cs }

// docs joins manifests into one stream.
func docs(ms ...string) string { return strings.Join(ms, "---\n") }

// A CA whose only other holders gained it in the same change is
// unexplained, and the words name them as new; what held it at BASE
// explains it, and the words say so; nothing says "no source holds it"
// when something does.
func TestProvenanceWithoutPolicy(t *testing.T) {
	caOld, caNew, attacker := testpki.Fixture("ca-2025"), testpki.Fixture("ca-2026"), testpki.Fixture("attacker-ca")
	svcLeaf := testpki.NewLeaf("svc", attacker, testpki.Date(2026, 11, 1), testpki.Days(90))
	one := func(cas ...testpki.Cert) string { return secretOf("a", "one", "ca.crt", cas) }
	caSecret := func(ns string, ca testpki.Cert) string { return secretOf(ns, "new-ca", "tls.crt", certs(ca)) }
	certManager := func(ca, leaf testpki.Cert) string { // a cert-manager Certificate's Secret
		return secretOf("a", "svc-tls", "ca.crt", certs(ca), "tls.crt", certs(leaf))
	}
	cases := []struct {
		name, base, head string
		why              string // of the CA added to Secret a/one data.ca.crt
		words            string // its source or provenance holds these words
		planted          string // the planted reason holds these words; "" for none planted
	}{
		{"held by its own Secret at BASE", docs(one(caOld), caSecret("a", caNew)), docs(one(caOld, caNew), caSecret("a", caNew)),
			WhySource, "held at BASE by Secret a/new-ca data.tls.crt", ""},
		{"held only by a Secret new in this change, in any namespace", one(caOld), docs(one(caOld, caNew), caSecret("kube-system", caNew)),
			WhyUnexplained, "introduced with Secret kube-system/new-ca data.tls.crt, also new in this change", "introduced with Secret kube-system/new-ca data.tls.crt, also new in this change"},
		{"held only by a Secret whose value the change replaces", docs(one(caOld), caSecret("a", caOld)), docs(one(caOld, caNew), caSecret("a", caNew)),
			WhyUnexplained, "introduced with Secret a/new-ca data.tls.crt, whose value this change replaces", "whose value this change replaces"},
		{"held by a sibling Secret's ca.crt, new in this change", one(caOld), docs(one(caOld, attacker), certManager(attacker, svcLeaf)),
			WhyUnexplained, "introduced with Secret a/svc-tls data.ca.crt, also new in this change", "introduced with Secret a/svc-tls data.ca.crt"},
		{"held by a sibling Secret's ca.crt at BASE", docs(one(caOld), certManager(attacker, svcLeaf)), docs(one(caOld, attacker), certManager(attacker, svcLeaf)),
			WhySource, "held at BASE by Secret a/svc-tls data.ca.crt", ""},
		{"held by the same Secret's other key at BASE", secretOf("a", "one", "ca.crt", certs(caOld), "extra.pem", certs(caNew)),
			secretOf("a", "one", "ca.crt", certs(caOld, caNew), "extra.pem", certs(caNew)), WhySource, "held at BASE by Secret a/one data.extra.pem", ""},
		{"held by the same Secret's other key, new in this change", one(caOld),
			secretOf("a", "one", "ca.crt", certs(caOld, attacker), "extra.pem", certs(attacker)),
			WhyUnexplained, "introduced with Secret a/one data.extra.pem, also new in this change", "introduced with Secret a/one data.extra.pem"},
		{"held by nothing", one(caOld), one(caOld, attacker), WhyUnexplained, "", "no source holds it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(model(tc.base), model(tc.head), fuzzNow)
			i := slices.IndexFunc(r.Trust, func(c TrustChange) bool { return c.Resource.Name == "one" && c.Field == "data.ca.crt" })
			if i < 0 || len(r.Trust[i].Added) != 1 {
				t.Fatalf("trust %+v, want one CA added to Secret a/one data.ca.crt", r.Trust)
			}
			added := r.Trust[i].Added[0]
			if added.Why != tc.why || !strings.Contains(added.Source+added.Provenance, tc.words) {
				t.Errorf("added %+v, want why %s with %q", added, tc.why, tc.words)
			}
			var reasons []string
			for _, p := range r.Planted {
				if p.Resource.Name == "one" && p.Field == "data.ca.crt" {
					reasons = append(reasons, p.Reason)
				}
			}
			switch {
			case tc.planted == "" && len(reasons) > 0:
				t.Errorf("planted %q, want none", reasons)
			case tc.planted != "" && (len(reasons) != 1 || !strings.Contains(reasons[0], tc.planted)):
				t.Errorf("planted %q, want one with %q", reasons, tc.planted)
			}
			lines := Table(r, false)
			if tc.words != "" && strings.Contains(lines, "no source holds it") {
				t.Errorf("something holds the CA, and the table says no source does:\n%s", lines)
			}
			if !strings.Contains(lines, tc.words) {
				t.Errorf("the table does not say %q:\n%s", tc.words, lines)
			}
		})
	}
}

// A Secret's ca.crt beside the tls.crt its CA issued is explained by it,
// a SHA-1 signature included: provenance says who issued what; whether
// Go verifies it is a warning of its own.
func TestIssuedBesideWithSHA1(t *testing.T) {
	ca := testpki.NewSHA1CA("legacy-ca", testpki.Date(2020, 1, 1), testpki.Days(3650))
	leaf := testpki.NewSHA1Leaf("legacy.svc", ca, testpki.Date(2026, 6, 1), testpki.Days(365))
	enc := base64.StdEncoding.EncodeToString
	head := "apiVersion: v1\nkind: Secret\nmetadata: {name: legacy-tls, namespace: a}\ndata:\n  ca.crt: " + enc(ca.PEM()) + "\n  tls.crt: " + enc(leaf.PEM()) + "\n"
	r := Compare(model("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"), model(head), fuzzNow)
	if len(r.Trust) != 1 || len(r.Trust[0].Added) != 1 || r.Trust[0].Added[0].Why != WhySource || r.Trust[0].Added[0].Source != "issued Secret a/legacy-tls data.tls.crt" {
		t.Fatalf("trust %+v, want the CA explained by the leaf it issued", r.Trust)
	}
	if len(r.Planted) != 0 || len(r.Facts) != 2 {
		t.Errorf("planted %+v, facts %+v: want no planted and the two SHA-1 signatures as warnings", r.Planted, r.Facts)
	}
}

// ownKeyPair is the layout cert-manager writes for a self-signed CA
// Certificate and nothing else: a kubernetes.io/tls Secret whose ca.crt
// and tls.crt are the same one self-signed CA, with a tls.key.
func TestOwnKeyPair(t *testing.T) {
	ca, other := testpki.Fixture("ca-2026"), testpki.Fixture("attacker-ca")
	leaf := testpki.Fixture("leaf-new")
	key := string(ca.KeyPEM())
	secret := func(typ string, data map[string]string) *yaml.RNode {
		s := "apiVersion: v1\nkind: Secret\nmetadata: {name: root, namespace: pki}\ntype: " + typ + "\ndata:\n"
		for _, k := range slices.Sorted(maps.Keys(data)) {
			s += "  " + k + ": " + base64.StdEncoding.EncodeToString([]byte(data[k])) + "\n"
		}
		n, err := yaml.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	pemOf := func(cs ...testpki.Cert) string {
		var b strings.Builder
		for _, c := range cs {
			b.Write(c.PEM())
		}
		return b.String()
	}
	tls := "kubernetes.io/tls"
	for _, tc := range []struct {
		name  string
		node  *yaml.RNode
		field string
		want  bool
	}{
		{"cert-manager's self-signed CA", secret(tls, map[string]string{"ca.crt": pemOf(ca), "tls.crt": pemOf(ca), "tls.key": key}), "data.ca.crt", true},
		{"its tls.crt is no trust object", secret(tls, map[string]string{"ca.crt": pemOf(ca), "tls.crt": pemOf(ca), "tls.key": key}), "data.tls.crt", false},
		{"Opaque", secret("Opaque", map[string]string{"ca.crt": pemOf(ca), "tls.crt": pemOf(ca), "tls.key": key}), "data.ca.crt", false},
		{"ca.crt another CA", secret(tls, map[string]string{"ca.crt": pemOf(other), "tls.crt": pemOf(ca), "tls.key": key}), "data.ca.crt", false},
		{"ca.crt with another CA beside it", secret(tls, map[string]string{"ca.crt": pemOf(ca, other), "tls.crt": pemOf(ca), "tls.key": key}), "data.ca.crt", false},
		{"a leaf's Secret", secret(tls, map[string]string{"ca.crt": pemOf(ca), "tls.crt": pemOf(leaf), "tls.key": key}), "data.ca.crt", false},
		{"no key", secret(tls, map[string]string{"ca.crt": pemOf(ca), "tls.crt": pemOf(ca)}), "data.ca.crt", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ownKeyPair(tc.node, tc.field); got != tc.want {
				t.Errorf("ownKeyPair = %t, want %t", got, tc.want)
			}
		})
	}
}
