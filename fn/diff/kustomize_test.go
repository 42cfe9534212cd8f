package diff

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/rotate-certs/rotate-certs/internal/testpki/layouts"
)

// istioPlugin is Istio's plug-in CA as a kustomization feeds it to the
// cluster (layouts.PluginCA: the files Istio's certificate tools write,
// cluster1's fed to a secretGenerator, the root's at the top where no
// build reads them). istiod and a sidecar-less client that reads the root
// once through env have no namespace: the kustomization's applies.
func istioPlugin(root, inter testpki.Cert) map[string]string {
	files := layouts.RootFiles("mesh", root)
	maps.Copy(files, layouts.PluginCA{Intermediate: inter, Root: root}.Files("mesh/cluster1"))
	files["mesh/kustomization.yaml"] = layouts.PluginCAKustomization("istiod.yaml")
	files["mesh/istiod.yaml"] = docs(deployment("", "istiod", "Secret", "cacerts", "volume", ""),
		deployment("", "root-reader", "Secret", "cacerts", "env", "root-cert.pem"))
	return files
}

// istioPlain is the same objects as plain manifests: what the build gives.
func istioPlain(root, inter testpki.Cert) map[string]string {
	return map[string]string{
		"mesh/cacerts.yaml": secret("istio-system", "cacerts", layouts.PluginCA{Intermediate: inter, Root: root}.Data()),
		"mesh/istiod.yaml": docs(deployment("istio-system", "istiod", "Secret", "cacerts", "volume", ""),
			deployment("istio-system", "root-reader", "Secret", "cacerts", "env", "root-cert.pem")),
	}
}

// TestKustomizePluginCARootReplaced: Istio's plug-in CA fed to a
// secretGenerator, its root replaced in one step, is read as the cluster
// gets it: the trust change of cacerts and the break of the reader that
// keeps the old root are those of the same objects written as plain
// manifests, each object in the kustomization's namespace. Before
// kustomizations were built, the PEM files were invisible: "PASS: no change
// to trust", exit 0.
func TestKustomizePluginCARootReplaced(t *testing.T) {
	run := func(layout func(root, inter testpki.Cert) map[string]string) (trustdiff.Result, exit.Code) {
		r := newRepo(t)
		base := r.commit(layout(istioRoot1, istioInt1))
		return r.result(base, r.commit(layout(istioRoot2, istioInt2)))
	}
	plain, plainCode := run(istioPlain)
	built, code := run(istioPlugin)
	if code != exit.Failed || plainCode != exit.Failed {
		t.Fatalf("exit %d (plain manifests: %d), want %d: trust %+v, breaks %+v", code, plainCode, exit.Failed, built.Trust, built.Breaks)
	}
	tc := findTrust(t, built, "cacerts")
	if tc.Resource.Namespace != "istio-system" || tc.Field != "data.root-cert.pem" || tc.Resource.Kustomization != "mesh/kustomization.yaml" {
		t.Errorf("trust change %+v, want cacerts in istio-system, data.root-cert.pem, built by mesh/kustomization.yaml", tc)
	}
	if len(tc.Added) != 1 || tc.Added[0].SHA256 != shaOf(istioRoot2) || len(tc.Removed) != 1 || tc.Removed[0].SHA256 != shaOf(istioRoot1) {
		t.Errorf("added %+v, removed %+v: want the new root for the old", tc.Added, tc.Removed)
	}
	if names := readerNames(tc.Readers); !strings.Contains(names, "istiod") || !strings.Contains(names, "root-reader") {
		t.Errorf("consumers %s: the kustomization's namespace puts istiod and root-reader beside cacerts", names)
	}
	if got, want := summary(built), summary(plain); !slices.Equal(got, want) {
		t.Errorf("built:\n%s\nplain manifests:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(built.CertificateFiles) != 2 || built.CertificateFiles[0].File != "mesh/root-cert.pem" || built.CertificateFiles[1].File != "mesh/root-key.pem" {
		t.Errorf("certificate files %+v, want the top root-cert.pem and root-key.pem, which no build reads", built.CertificateFiles)
	}
}

// summary is what a result says, but for files: the verdict's parts.
func summary(r trustdiff.Result) []string {
	var out []string
	for _, tc := range r.Trust {
		line := tc.Resource.String() + " " + tc.Field
		for _, c := range tc.Added {
			line += " +" + c.SHA256[:8] + " " + c.Why
		}
		for _, c := range tc.Removed {
			line += " -" + c.SHA256[:8]
		}
		out = append(out, line+" read by "+readerNames(tc.Readers))
	}
	for _, b := range r.Breaks {
		out = append(out, "break "+b.Certificate.Resource.String()+" "+b.Certificate.Key+" needs "+b.Needs.SHA256[:8]+" from "+b.Trust.Resource.String()+" "+b.Trust.Field+" for "+readerNames(b.Readers))
	}
	for _, p := range r.Planted {
		out = append(out, "planted "+p.Resource.String()+" "+p.Field+" "+p.SHA256[:8])
	}
	for _, w := range r.Rolls {
		out = append(out, "roll "+w.Resource.String())
	}
	slices.Sort(out)
	return out
}

// TestKustomizeChangesOutsideBuilds: a certificate file no build reads is
// listed when it changes, named and never shown, and not judged; a remote
// base is named as not read, and the verdict on the rest stands.
func TestKustomizeChangesOutsideBuilds(t *testing.T) {
	r := newRepo(t)
	tree := istioPlugin(istioRoot1, istioInt1)
	tree["mesh/kustomization.yaml"] = strings.Replace(tree["mesh/kustomization.yaml"], "resources:\n", "resources:\n- github.com/istio/istio/manifests/charts/base?ref=1.22.0\n", 1)
	base := r.commit(tree)
	head := r.commit(map[string]string{"mesh/root-cert.pem": pem(istioRoot2), "mesh/root-key.pem": string(istioRoot2.KeyPEM())})
	out, stderr, code := r.diff(base, head, "table", false)
	if code != exit.OK {
		t.Fatalf("exit %d, want 0: %s\n%s", code, out, stderr)
	}
	for _, want := range []string{
		"PASS: no change to trust in what is read; certificate files changed, not judged",
		"CERTIFICATE FILES (2):\n  mesh/root-cert.pem: changed; no kustomization build reads it: not judged\n  mesh/root-key.pem: changed;",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "BEGIN") {
		t.Errorf("a certificate file's content is shown:\n%s", out)
	}
	note := "mesh/kustomization.yaml: resources[0] github.com/istio/istio/manifests/charts/base: a remote base: not read (rotate-certs builds offline)"
	if strings.Count(stderr, note) != 2 { // at BASE and at HEAD
		t.Errorf("stderr names the remote base %d times, want once per side:\n%s", strings.Count(stderr, note), stderr)
	}
	md, _, _ := r.diff(base, head, "markdown", false)
	if !strings.Contains(md, "<summary>Certificate files (2)</summary>") {
		t.Errorf("markdown lacks the certificate files:\n%s", md)
	}
	res, _ := r.result(base, head)
	if len(res.CertificateFiles) != 2 || res.CertificateFiles[1] != (trustdiff.CertFileChange{File: "mesh/root-key.pem", Change: "changed"}) {
		t.Errorf("JSON certificateFiles %+v", res.CertificateFiles)
	}
	if len(res.Trust)+len(res.Breaks)+len(res.Planted) != 0 {
		t.Errorf("a file no build reads is judged: %+v", res)
	}
}
