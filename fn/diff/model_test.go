package diff

import (
	"bytes"
	"encoding/base64"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/render"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// render runs `rotate-certs render` on dir of the repository at now.
func (r *testRepo) render(dir string) {
	r.t.Helper()
	var out, errb bytes.Buffer
	if err := render.Render(filepath.Join(r.dir, dir), render.Options{At: testpki.GoldenNow, Stdout: &out, Stderr: exit.NewPrinter(&errb, "rotate-certs render")}); err != nil {
		r.t.Fatalf("render %s: %v %s", dir, err, errb.String())
	}
}

// A bundle fanned out to several namespaces writes the same CAs to each
// target: a render explains every one of them, not only the first.
func TestFannedOutBundleExplainsEveryTarget(t *testing.T) {
	namespaces := []string{egNS, "team-a", "team-b"}
	files := gatewayTree(caOld, leafOld, caOld)
	files["gw/rotation-policy.yaml"] = strings.Replace(gatewayPolicy, "namespaces: [envoy-gateway-system]",
		"namespaces: ["+strings.Join(namespaces, ", ")+"]", 1)
	for _, ns := range namespaces[1:] {
		files["gw/trust-"+ns+".yaml"] = secret(ns, "envoy-gateway-trust", map[string]string{"ca.crt": pem(caOld)})
	}
	r := newRepo(t)
	base := r.commit(files)
	r.commit(map[string]string{"gw/gateway-ca.yaml": gatewayTree(caNew, leafNew)["gw/gateway-ca.yaml"]})
	r.render("gw")
	res, code := r.result(base, r.commit(nil))
	if code != exit.OK || len(res.Breaks)+len(res.Planted) != 0 {
		t.Fatalf("exit %d, breaks %+v, planted %+v", code, res.Breaks, res.Planted)
	}
	explained := map[string]bool{}
	for _, tc := range res.Trust {
		if tc.Bundle != "gateway" || len(tc.Added) != 1 || tc.Added[0].Source != "Secret envoy-gateway-system/envoy-gateway data.ca.crt" {
			continue
		}
		if len(tc.Kept) == 1 && tc.Kept[0].Why == "carried" {
			explained[tc.Resource.Namespace] = true
		}
	}
	for _, ns := range namespaces {
		if !explained[ns] {
			t.Errorf("target in %s is not explained as the render's: %+v", ns, res.Trust)
		}
	}
}

// example returns the manifests of examples/<name> (its top directory),
// placed under dir.
func example(t *testing.T, name, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	src := golden.Path("examples", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join(src, e.Name())); err == nil && strings.HasSuffix(e.Name(), ".yaml") {
			files[dir+"/"+e.Name()] = string(b)
		}
	}
	return files
}

// readFile returns examples/<name>/<file>.
func readFile(t *testing.T, name, file string) string {
	t.Helper()
	b, err := os.ReadFile(golden.Path("examples", name, filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Linkerd's proxy injector copies the trust anchors into every meshed pod
// at admission (examples/linkerd, restart.mesh: linkerd): the meshed
// workloads are readers of the trust roots that read them once, found
// by the injector's own rules as render finds them.
func TestMeshInjectedReaders(t *testing.T) {
	meshed, notMeshed := []string{"web", "emoji", "voting", "debug-shell"}, []string{"vote-bot", "metrics-scraper"}
	anchorPEM := func(t *testing.T) string {
		s := readFile(t, "linkerd", "trust-anchor.yaml")
		i := strings.Index(s, "ca.crt: ")
		b, err := base64.StdEncoding.DecodeString(strings.Fields(s[i+len("ca.crt: "):])[0])
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, r *testRepo) string
		code   exit.Code
	}{
		{"a render rolls them", func(t *testing.T, r *testRepo) string { r.render("linkerd"); return r.commit(nil) }, exit.OK},
		{"roots replaced and issuer re-issued by hand", func(t *testing.T, r *testRepo) string {
			roots := configMap("linkerd", "linkerd-identity-trust-roots", map[string]string{"ca-bundle.crt": anchorPEM(t)})
			return r.commit(map[string]string{"linkerd/identity-trust-roots.yaml": roots,
				"linkerd/identity-issuer.yaml": readFile(t, "linkerd", "next/identity-issuer.yaml")})
		}, exit.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			base := r.commit(example(t, "linkerd", "linkerd"))
			res, code := r.result(base, tc.change(t, r))
			if code != tc.code {
				t.Fatalf("exit %d, want %d: breaks %+v, planted %+v", code, tc.code, res.Breaks, res.Planted)
			}
			var cs []trustdiff.Reader
			if tc.code == exit.OK {
				cs = findTrust(t, res, "linkerd-identity-trust-roots").Readers
			}
			for _, b := range res.Breaks {
				if b.Certificate.Resource.Name == "linkerd-identity-issuer" && b.Trust.Resource.Name == "linkerd-identity-trust-roots" {
					cs = append(cs, b.Readers...)
				}
			}
			got := map[string]string{}
			for _, c := range cs {
				if c.Once {
					got[c.Resource.Name] = c.Via
				}
			}
			for _, w := range meshed {
				if got[w] != "injection at admission" {
					t.Errorf("%s: consumers %+v, want it read once by injection", w, cs)
				}
			}
			for _, w := range notMeshed {
				if _, ok := got[w]; ok {
					t.Errorf("%s is not meshed: consumers %+v", w, cs)
				}
			}
		})
	}
}

// under places files under dir instead of their first directory.
func under(dir string, files map[string]string) map[string]string {
	out := map[string]string{}
	for name, text := range files {
		_, rest, _ := strings.Cut(name, "/")
		out[dir+"/"+rest] = text
	}
	return out
}

// The first-day guide's repository: two clusters holding the same
// objects, and prod's trust replaced by hand. Each break is one
// certificate against prod's trust, named where prod holds it; staging's
// copy of the same certificate is the same break, not a second one.
func TestBreakSeenFromTwoClustersIsReportedOnce(t *testing.T) {
	files := map[string]string{}
	for _, c := range []string{"prod", "staging"} {
		tree := gatewayTree(caNew, leafNew, caOld)
		tree["gw/client.yaml"] = secret(egNS, "ratelimit-client", map[string]string{"tls.crt": pem(leafOld)})
		maps.Copy(files, under("clusters/"+c, tree))
	}
	r := newRepo(t)
	base := r.commit(files)
	head := r.commit(map[string]string{"clusters/prod/trust.yaml": under("clusters/prod", gatewayTree(caNew, leafNew, caNew))["clusters/prod/trust.yaml"]})
	res, code := r.result(base, head)
	if code != exit.Failed || len(res.Breaks) != 2 {
		t.Fatalf("exit %d, %d breaks %+v: want 2, the client's old leaf and the gateway's new one", code, len(res.Breaks), res.Breaks)
	}
	for _, b := range res.Breaks {
		if !strings.HasPrefix(b.Certificate.Resource.File, "clusters/prod/") || len(b.AlsoAt) != 1 ||
			!strings.HasPrefix(b.AlsoAt[0].Resource.File, "clusters/staging/") {
			t.Errorf("break %+v: want the certificate named in prod, also at staging", b)
		}
	}
	if out, _, _ := r.diff(base, head, "table", false); !strings.Contains(out, "(in clusters/prod/client.yaml against clusters/prod/trust.yaml; also held at clusters/staging/client.yaml)") {
		t.Errorf("the table does not say where the break is and where else its certificate is held:\n%s", out)
	}
}

// examples/multicluster: east and west share the trust domain
// mesh-anchors. After the render at the top that follows east's re-issued
// issuer, both clusters' roots hold both anchors. A change that leaves
// west's issuer on a CA east's roots do not hold - the old anchor dropped
// from east's roots by hand, or west's issuer re-issued from an anchor no
// root holds yet - is a break of east's roots across clusters, naming both
// packages and the domain.
func TestDomainBreakAcrossClusters(t *testing.T) {
	stray := testpki.NewSubjectCA("diff-stray-anchor", "root.linkerd.cluster.local", testpki.Date(2026, 6, 1), testpki.Days(3650))
	strayIssuer := testpki.NewIntermediate("diff-stray-issuer", "identity.linkerd.cluster.local", stray, testpki.Date(2026, 6, 1), testpki.Days(365))
	for _, tc := range []struct {
		name   string
		change func(t *testing.T) map[string]string
	}{
		{"old anchor dropped from east's roots", func(t *testing.T) map[string]string {
			s := readFile(t, "multicluster", "clusters/east/trust-anchor.yaml")
			anchor, err := base64.StdEncoding.DecodeString(strings.Fields(s[strings.Index(s, "ca.crt: ")+len("ca.crt: "):])[0])
			if err != nil {
				t.Fatal(err)
			}
			return map[string]string{"clusters/east/identity-trust-roots.yaml": configMap("linkerd", "linkerd-identity-trust-roots", map[string]string{"ca-bundle.crt": string(anchor)})}
		}},
		{"west's issuer re-issued from an anchor no root holds", func(t *testing.T) map[string]string {
			return map[string]string{"clusters/west/identity-issuer.yaml": secret("linkerd", "linkerd-identity-issuer",
				map[string]string{"crt.pem": pem(strayIssuer), "key.pem": string(strayIssuer.KeyPEM())})}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := multicluster(t)
			base := r.commit(nil)
			head := r.commit(tc.change(t))
			res, code := r.result(base, head)
			var found bool
			for _, b := range res.Breaks {
				if b.Certificate.Package == "clusters/west" && b.Certificate.Resource.Name == "linkerd-identity-issuer" &&
					b.Trust.Package == "clusters/east" && b.Domain == "mesh-anchors" {
					found = strings.Contains(readerNames(b.Readers), "linkerd-gateway")
				}
			}
			if code != exit.Failed || !found {
				t.Fatalf("exit %d, breaks %+v: want west's issuer against east's roots in domain mesh-anchors, read by east's gateway", code, res.Breaks)
			}
			for _, tc := range res.Trust {
				if tc.Bundle == "linkerd-anchors" && tc.Package != strings.Split(tc.Resource.File, "/identity")[0] {
					t.Errorf("trust change %s in package %q", tc.Resource.File, tc.Package)
				}
			}
			out, _, _ := r.diff(base, head, "table", false)
			if !strings.Contains(out, "package clusters/west") || !strings.Contains(out, "package clusters/east") || !strings.Contains(out, "trust domain mesh-anchors") {
				t.Errorf("table does not name both packages and the domain:\n%s", out)
			}
		})
	}
}

// multicluster is a repository of examples/multicluster's two clusters
// after the renders at its top of the new anchor and of east's re-issued
// issuer.
func multicluster(t *testing.T) *testRepo {
	files := map[string]string{}
	for _, c := range []string{"east", "west"} {
		maps.Copy(files, example(t, "multicluster/clusters/"+c, "clusters/"+c))
	}
	r := newRepo(t)
	r.commit(files)
	r.render(".")
	r.commit(map[string]string{"clusters/east/identity-issuer.yaml": readFile(t, "multicluster", "next/east/identity-issuer.yaml")})
	r.render(".")
	return r
}

// examples/multicluster: west's policy adds a source of its own - an
// anchor only its policy holds, inline - and the render at the top puts it
// into both clusters' roots, as the domain's union says. diff explains
// east's new anchor as render does: current in a source of the domain,
// west's (source, naming west's package), not planted - explained by
// east's package alone, nothing in the tree held it before the change.
func TestDomainSourceExplainsAcrossClusters(t *testing.T) {
	anchor := testpki.NewSubjectCA("diff-domain-anchor", "root.linkerd.cluster.local", testpki.Date(2026, 6, 1), testpki.Days(3650))
	r := multicluster(t)
	base := r.commit(nil)
	policy := readRepoFile(t, r, "clusters/west/rotation-policy.yaml")
	line := "    - secret: {name: linkerd-trust-anchor, namespace: linkerd, key: ca.crt}\n"
	if !strings.Contains(policy, line) {
		t.Fatalf("west's policy has no line %q", line)
	}
	inline := "    - inline: |\n        " + strings.ReplaceAll(strings.TrimSpace(string(anchor.PEM())), "\n", "\n        ") + "\n"
	r.commit(map[string]string{"clusters/west/rotation-policy.yaml": strings.Replace(policy, line, line+inline, 1)})
	r.render(".")
	head := r.commit(nil)
	res, code := r.result(base, head)
	var east *trustdiff.CA
	for i, tc := range res.Trust {
		for j, ca := range tc.Added {
			if tc.Package == "clusters/east" && ca.SHA256 == shaOf(anchor) {
				east = &res.Trust[i].Added[j]
			}
		}
	}
	if east == nil {
		t.Fatalf("east's roots did not gain the anchor: %+v", res.Trust)
	}
	if code != exit.OK || len(res.Planted) > 0 || east.Why != trustdiff.WhySource || !strings.Contains(east.Source, "in package clusters/west") {
		t.Fatalf("exit %d, planted %+v, east's anchor %+v: want it explained by west's source in the domain", code, res.Planted, *east)
	}
}

// readRepoFile returns the text of file in the work tree of r.
func readRepoFile(t *testing.T, r *testRepo, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
