package diff

import (
	"fmt"
	"github.com/rotate-certs/rotate-certs/fn/exit"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// clusterPolicy is a package's policy whose bundle, named bundle, writes
// ConfigMap app/trust from the CA of Secret app/<source>.
func clusterPolicy(bundle, source string) string {
	return fmt.Sprintf(`apiVersion: rotate-certs.dev/v1alpha1
kind: RotationPolicy
metadata:
  name: trust
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  trustBundles:
  - name: %s
    sources:
    - secret: {name: %s, namespace: app, key: tls.crt}
    target:
      kind: ConfigMap
      name: trust
      namespaces: [app]
      key: ca.crt
`, bundle, source)
}

// clusterCA is Secret app/name holding CA ca.
func clusterCA(name string, ca testpki.Cert) string {
	return secret("app", name, map[string]string{"tls.crt": pem(ca), "tls.key": string(ca.KeyPEM())})
}

// trustCM is ConfigMap app/trust holding cas.
func trustCM(cas ...testpki.Cert) string {
	return configMap("app", "trust", map[string]string{"ca.crt": pem(cas...)})
}

// TestSameObjectInTwoDirectories: two directories (two clusters) hold the
// same object; a change to one is reported against it alone, with its own
// package's explanation - the other directory's copy neither keeps the CA
// dropped nor lends its bundle and sources.
func TestSameObjectInTwoDirectories(t *testing.T) {
	for _, tc := range []struct {
		name             string
		base, head       map[string]string
		bundle, addedWhy string
		source           string // in the added CA's source
	}{
		{name: "no policy",
			base:     map[string]string{"a/trust.yaml": trustCM(caOld), "b/trust.yaml": trustCM(caOld)},
			head:     map[string]string{"a/trust.yaml": trustCM(caNew)},
			addedWhy: trustdiff.WhyUnexplained},
		{name: "a policy in each directory, same target",
			base: map[string]string{
				"a/policy.yaml": clusterPolicy("trust-a", "ca-a"), "a/ca.yaml": clusterCA("ca-a", caOld), "a/trust.yaml": trustCM(caOld),
				"b/policy.yaml": clusterPolicy("trust-b", "ca-b"), "b/ca.yaml": clusterCA("ca-b", caNew), "b/trust.yaml": trustCM(caNew)},
			head:   map[string]string{"a/ca.yaml": clusterCA("ca-a", caNew), "a/trust.yaml": trustCM(caNew)},
			bundle: "trust-a", addedWhy: trustdiff.WhySource, source: "ca-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			base := r.commit(tc.base)
			res, _ := r.result(base, r.commit(tc.head))
			if len(res.Trust) != 1 {
				t.Fatalf("trust changes %+v, want one, a/trust.yaml's", res.Trust)
			}
			got := res.Trust[0]
			if got.Resource.File != "a/trust.yaml" || got.Bundle != tc.bundle {
				t.Errorf("change to %s (bundle %q), want a/trust.yaml (bundle %q)", got.Resource.File, got.Bundle, tc.bundle)
			}
			if len(got.Added) != 1 || got.Added[0].SHA256 != shaOf(caNew) || got.Added[0].Why != tc.addedWhy ||
				!strings.Contains(got.Added[0].Source, tc.source) {
				t.Errorf("added %+v, want the new CA, %s from %q", got.Added, tc.addedWhy, tc.source)
			}
			if len(got.Removed) != 1 || got.Removed[0].SHA256 != shaOf(caOld) || len(got.Kept) != 0 {
				t.Errorf("removed %+v kept %+v, want the old CA removed and nothing kept", got.Removed, got.Kept)
			}
		})
	}
}

// Two directories holding the same tree (two checkouts of one commit): a
// policy that cannot be applied is the same problem on both sides, named
// below each side's top - not by the side's own path, which would make it
// differ and the unchanged file fatal. FuzzDiff found diff A A exit 2.
func TestPolicyProblemInTwoDirectoriesIsTheSame(t *testing.T) {
	tree := map[string]string{"app/policy.yaml": clusterPolicy("trust", "missing"), "app/trust.yaml": trustCM(caOld)}
	a, b := writeTree(t, tree), writeTreeAt(t, filepath.Join(t.TempDir(), "second", "checkout"), tree)
	run := diffDirs(t, a, b, "json", nil)
	if run.code != exit.OK || len(run.res.Incomplete) != 1 || run.res.Incomplete[0].File != "app/policy.yaml" {
		t.Fatalf("exit %d, incomplete %+v: want 0 and app/policy.yaml not read\n%s", run.code, run.res.Incomplete, run.stderr)
	}
	for _, text := range []string{run.stderr, run.res.Incomplete[0].Reason} {
		if strings.Contains(text, a) || strings.Contains(text, b) {
			t.Errorf("names a side's own path:\n%s", text)
		}
	}
}
