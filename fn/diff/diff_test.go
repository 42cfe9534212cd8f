package diff

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/render"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

var (
	caOld, caNew     = testpki.Fixture("ca-2025"), testpki.Fixture("ca-2026")
	leafOld, leafNew = testpki.Fixture("leaf-old"), testpki.Fixture("leaf-new")
	attacker         = testpki.Fixture("attacker-ca")
)

const egNS = "envoy-gateway-system"

// gatewayTree is the Envoy Gateway layout of examples/envoy-gateway: the
// CA Secret certgen writes, the trust Secret peers mount, a rate-limit
// server that reads it once (subPath) and an Envoy that reloads it.
func gatewayTree(ca, leaf testpki.Cert, trust ...testpki.Cert) map[string]string {
	return map[string]string{
		"gw/gateway-ca.yaml": secret(egNS, "envoy-gateway", map[string]string{"ca.crt": pem(ca), "tls.crt": pem(leaf), "tls.key": string(leaf.KeyPEM())}),
		"gw/trust.yaml":      secret(egNS, "envoy-gateway-trust", map[string]string{"ca.crt": pem(trust...)}),
		"gw/ratelimit.yaml":  deployment(egNS, "envoy-ratelimit", "Secret", "envoy-gateway-trust", "subPath", "ca.crt"),
		"gw/envoy.yaml":      deployment(egNS, "envoy-default-eg", "Secret", "envoy-gateway-trust", "volume", "", "rotate-certs.dev/reload", "hot"),
	}
}

const gatewayPolicy = `apiVersion: rotate-certs.dev/v1alpha1
kind: RotationPolicy
metadata:
  name: gateway-trust
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  trustBundles:
  - name: gateway
    sources:
    - secret: {name: envoy-gateway, namespace: envoy-gateway-system, key: ca.crt}
    target:
      name: envoy-gateway-trust
      namespaces: [envoy-gateway-system]
`

func TestCertgenInPlaceWithoutRenderBreaks(t *testing.T) {
	r := newRepo(t)
	base := r.commit(gatewayTree(caOld, leafOld, caOld))
	head := r.commit(map[string]string{"gw/gateway-ca.yaml": gatewayTree(caNew, leafNew)["gw/gateway-ca.yaml"]})
	res, code := r.result(base, head)
	if code != exit.Failed {
		t.Fatalf("exit %d, want %d", code, exit.Failed)
	}
	var found bool
	for _, b := range res.Breaks {
		if b.Certificate.Resource.Name == "envoy-gateway" && b.Certificate.SHA256 == shaOf(leafNew) &&
			b.Needs.SHA256 == shaOf(caNew) && b.Trust.Resource.Name == "envoy-gateway-trust" {
			found = true
			names := readerNames(b.Readers)
			if !strings.Contains(names, "envoy-ratelimit") || !strings.Contains(names, "envoy-default-eg") {
				t.Errorf("consumers %s, want the rate-limit server and Envoy", names)
			}
		}
	}
	if !found {
		t.Fatalf("no break naming the new leaf, the new CA and the trust Secret: %+v", res.Breaks)
	}
	if len(res.Planted) != 0 {
		t.Errorf("planted %+v: certgen's CA is explained by the leaf it issued beside it", res.Planted)
	}
}

func readerNames(cs []trustdiff.Reader) string {
	var ns []string
	for _, c := range cs {
		ns = append(ns, c.Resource.Name)
	}
	return strings.Join(ns, ",")
}

func TestProperRenderIsExplained(t *testing.T) {
	r := newRepo(t)
	files := gatewayTree(caOld, leafOld, caOld)
	files["gw/rotation-policy.yaml"] = gatewayPolicy
	base := r.commit(files)
	r.commit(map[string]string{"gw/gateway-ca.yaml": gatewayTree(caNew, leafNew)["gw/gateway-ca.yaml"]})
	var out, errb bytes.Buffer
	if err := render.Render(filepath.Join(r.dir, "gw"), render.Options{At: testpki.GoldenNow, Stdout: &out, Stderr: exit.NewPrinter(&errb, "rotate-certs render")}); err != nil {
		t.Fatalf("render: %v %s", err, errb.String())
	}
	head := r.commit(nil)
	res, code := r.result(base, head)
	if code != exit.OK || len(res.Breaks) != 0 || len(res.Planted) != 0 {
		t.Fatalf("exit %d, breaks %+v, planted %+v", code, res.Breaks, res.Planted)
	}
	tc := findTrust(t, res, "envoy-gateway-trust")
	if len(tc.Added) != 1 || tc.Added[0].SHA256 != shaOf(caNew) || tc.Added[0].Why != trustdiff.WhySource || tc.Bundle != "gateway" {
		t.Errorf("added %+v (bundle %q), want the new CA from its source", tc.Added, tc.Bundle)
	}
	if len(tc.Kept) != 1 || tc.Kept[0].Why != trustdiff.WhyCarried {
		t.Errorf("kept %+v, want the old CA carried", tc.Kept)
	}
	// Every roll says when it rolls: now, as its pod template changes.
	if len(res.Rolls) != 1 || res.Rolls[0].Resource.Name != "envoy-ratelimit" || res.Rolls[0].Wave != trustdiff.WaveNow {
		t.Errorf("rolls %+v, want the rate-limit server, now", res.Rolls)
	}
	if table, _, _ := r.diff(base, head, "table", false); !strings.Contains(table, "Deployment envoy-gateway-system/envoy-ratelimit rolls now (in gw/ratelimit.yaml)") {
		t.Errorf("table:\n%s", table)
	}
}

func findTrust(t *testing.T, res trustdiff.Result, name string) trustdiff.TrustChange {
	t.Helper()
	for _, tc := range res.Trust {
		if tc.Resource.Name == name {
			return tc
		}
	}
	t.Fatalf("no trust change of %s in %+v", name, res.Trust)
	return trustdiff.TrustChange{}
}

func TestHandEditDroppingANeededCABreaks(t *testing.T) {
	r := newRepo(t)
	files := gatewayTree(caNew, leafNew, caNew, caOld)
	files["gw/client.yaml"] = secret(egNS, "ratelimit-client", map[string]string{"tls.crt": pem(leafOld)})
	base := r.commit(files)
	head := r.commit(map[string]string{"gw/trust.yaml": gatewayTree(caNew, leafNew, caNew)["gw/trust.yaml"]})
	res, code := r.result(base, head)
	if code != exit.Failed || len(res.Breaks) != 1 {
		t.Fatalf("exit %d, breaks %+v", code, res.Breaks)
	}
	b := res.Breaks[0]
	if b.Certificate.Resource.Name != "ratelimit-client" || b.Needs.SHA256 != shaOf(caOld) {
		t.Errorf("break %+v, want the client leaf needing the old CA", b)
	}
}

func TestPlantedCAInData(t *testing.T) {
	r := newRepo(t)
	base := r.commit(gatewayTree(caOld, leafOld, caOld))
	head := r.commit(map[string]string{"gw/trust.yaml": gatewayTree(caOld, leafOld, caOld, attacker)["gw/trust.yaml"]})
	res, code := r.result(base, head)
	if code != exit.Failed || len(res.Planted) != 1 || res.Planted[0].SHA256 != shaOf(attacker) {
		t.Fatalf("exit %d, planted %+v", code, res.Planted)
	}
	if _, _, code := r.diff(base, head, "table", true); code != exit.OK {
		t.Errorf("--allow-unexplained: exit %d, want 0", code)
	}
}

func TestPEMReencodedIsNoChange(t *testing.T) {
	r := newRepo(t)
	base := r.commit(gatewayTree(caOld, leafOld, caOld, caNew))
	// reordered, re-wrapped at 76 columns with CRLF, and as stringData
	wrapped := strings.ReplaceAll(rewrap(pem(caNew, caOld)), "\n", "\r\n")
	trust := object("v1", "Secret", egNS, "envoy-gateway-trust", nil) + "stringData:\n  ca.crt: " + quote(wrapped) + "\n"
	head := r.commit(map[string]string{"gw/trust.yaml": trust})
	res, code := r.result(base, head)
	if code != exit.OK || !res.Empty() {
		t.Fatalf("exit %d, result %+v, want no change", code, res)
	}
	if res, _ := r.result(base, base); !res.Empty() {
		t.Errorf("diff A A: %+v", res)
	}
}

// rewrap re-wraps the base64 of PEM text at 76 columns.
func rewrap(p string) string {
	var out []string
	var body string
	for _, l := range strings.Split(p, "\n") {
		switch {
		case strings.HasPrefix(l, "-----BEGIN"):
			out, body = append(out, l), ""
		case strings.HasPrefix(l, "-----END"):
			for len(body) > 76 {
				out, body = append(out, body[:76]), body[76:]
			}
			out = append(out, body, l)
		default:
			body += l
		}
	}
	return strings.Join(out, "\n") + "\n"
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`).Replace(s) + `"`
}

// An edit of a memory record (retired, unused) that a render does not
// make is planted: it changes when a CA leaves. The unused record is
// memory like retired: a forged time moves retain.dropUnusedAfter's drop.
func TestForgedMemoryRecordIsPlanted(t *testing.T) {
	const retired, unused = "rotate-certs.dev/retired", "rotate-certs.dev/unused"
	line := func(at string) string { return shaOf(caOld) + " " + at }
	for _, tc := range []struct {
		name       string
		base, head []string // annotations of the trust Secret
		client     bool     // a client presents a leaf of caOld at HEAD: something chains to it
		planted    string   // the annotation planted, "" for none
	}{
		{"retired time moved later", []string{retired, line("2026-11-20T00:00:00Z")}, []string{retired, line("2027-06-01T00:00:00Z")}, false, retired},
		{"unused time moved earlier", []string{retired, line("2026-11-01T00:00:00Z"), unused, line("2026-11-20T00:00:00Z")},
			[]string{retired, line("2026-11-01T00:00:00Z"), unused, line("2026-11-02T00:00:00Z")}, false, unused},
		{"unused line added at a time after now", []string{retired, line("2026-11-01T00:00:00Z")},
			[]string{retired, line("2026-11-01T00:00:00Z"), unused, line("2027-01-01T00:00:00Z")}, false, unused},
		{"unused line removed, nothing chains", []string{retired, line("2026-11-01T00:00:00Z"), unused, line("2026-11-20T00:00:00Z")},
			[]string{retired, line("2026-11-01T00:00:00Z")}, false, unused},
		{"unused line removed, a leaf chains again", []string{retired, line("2026-11-01T00:00:00Z"), unused, line("2026-11-20T00:00:00Z")},
			[]string{retired, line("2026-11-01T00:00:00Z")}, true, ""},
		{"unused line a render writes", []string{retired, line("2026-11-01T00:00:00Z")},
			[]string{retired, line("2026-11-01T00:00:00Z"), unused, line("2026-11-20T00:00:00Z")}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			trust := func(annotations []string) string {
				return secret(egNS, "envoy-gateway-trust", map[string]string{"ca.crt": pem(caNew, caOld)}, annotations...)
			}
			files := gatewayTree(caNew, leafNew)
			files["gw/trust.yaml"] = trust(tc.base)
			base := r.commit(files)
			next := map[string]string{"gw/trust.yaml": trust(tc.head)}
			if tc.client {
				next["gw/client.yaml"] = secret(egNS, "ratelimit-client", map[string]string{"tls.crt": pem(leafOld)})
			}
			res, _ := r.result(base, r.commit(next))
			var got []string
			for _, p := range res.Planted {
				got = append(got, p.Annotation+" "+p.SHA256)
			}
			want := []string{}
			if tc.planted != "" {
				want = []string{tc.planted + " " + shaOf(caOld)}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("planted %v, want %v", got, want)
			}
		})
	}
}

func TestRenderInWavesListsEachRollAndItsWave(t *testing.T) {
	r := newRepo(t)
	files := map[string]string{}
	dir := golden.Path("examples", "waves")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && strings.HasSuffix(e.Name(), ".yaml") {
			files["waves/"+e.Name()] = string(b)
		}
	}
	base := r.commit(files)
	var out, errb bytes.Buffer
	if err := render.Render(filepath.Join(r.dir, "waves"), render.Options{At: testpki.GoldenNow, Stdout: &out, Stderr: exit.NewPrinter(&errb, "rotate-certs render")}); err != nil {
		t.Fatalf("render: %v %s", err, errb.String())
	}
	res, code := r.result(base, r.commit(nil))
	if code != exit.OK || len(res.Breaks)+len(res.Planted) != 0 {
		t.Fatalf("exit %d, breaks %+v, planted %+v", code, res.Breaks, res.Planted)
	}
	now, later := 0, 0
	for _, w := range res.Rolls {
		if w.Wave == trustdiff.WaveNow {
			now++
		} else if strings.Contains(w.Wave, "of 4, due") {
			later++
		}
	}
	if now != 3 || later != 9 {
		t.Errorf("rolls %+v: want 3 now and 9 in later waves", res.Rolls)
	}
}

func TestAddedIsReverseRemoved(t *testing.T) {
	r := newRepo(t)
	base := r.commit(gatewayTree(caOld, leafOld, caOld))
	head := r.commit(gatewayTree(caNew, leafNew, caNew, attacker))
	ab, _ := r.result(base, head)
	ba, _ := r.result(head, base)
	set := func(res trustdiff.Result, added bool) string {
		var s []string
		for _, tc := range res.Trust {
			cas := tc.Removed
			if added {
				cas = tc.Added
			}
			for _, c := range cas {
				s = append(s, tc.Resource.Name+" "+tc.Field+" "+c.SHA256)
			}
		}
		slices.Sort(s)
		return strings.Join(s, "\n")
	}
	if a, b := set(ab, true), set(ba, false); a != b || a == "" {
		t.Errorf("added A->B:\n%s\nremoved B->A:\n%s", a, b)
	}
}
