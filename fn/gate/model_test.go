package gate

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/repo"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// render runs `rotate-certs render` on dir of the repository at now.
func (r *testRepo) render(dir string) {
	r.t.Helper()
	var out, errb bytes.Buffer
	if err := repo.Render(filepath.Join(r.dir, dir), repo.Options{At: testpki.GoldenNow, Stdout: &out, Stderr: exit.NewPrinter(&errb, "rotate-certs render")}); err != nil {
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
