package e2eharness

import (
	"os"
	"path/filepath"
	"testing"
)

// ArgoCDVersion is the Argo CD release whose argocd-cmp-server and
// repo-server manifest generation the Argo CD plugin tests run (as
// hack/argocd.sh's argocd-harness). The Makefile's ARGOCD_VERSION must say
// the same.
const ArgoCDVersion = "v3.2.12"

// ArgoCDHarness returns the argocd-harness `make argocd` built into the
// per-machine cache, or skips the test naming that target.
func ArgoCDHarness(t testing.TB) string {
	t.Helper()
	return cachedTool(t, "argocd-"+ArgoCDVersion, "argocd-harness",
		"run `make argocd` (part of `make tools`; builds Argo CD "+ArgoCDVersion+"'s cmp-server and repo-server generation once per machine)")
}

// cachedTool returns <user cache dir>/rotate-certs/<dir>/bin/<name>, where
// the Makefile builds the heavy tools once per machine, or skips the test
// saying how to build it.
func cachedTool(t testing.TB, dir, name, how string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("skipping: no cache directory for %s (%v): %s", name, err, how)
	}
	p := filepath.Join(cache, "rotate-certs", dir, "bin", name)
	if info, err := os.Stat(p); err != nil || info.Mode()&0o111 == 0 {
		t.Skipf("skipping: %s is not built: %s", p, how)
	}
	return p
}
