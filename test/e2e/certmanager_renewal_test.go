package e2e

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// End-to-end test of examples/cert-manager-renewal: the walk of its
// README, step by step through the real binary, with what trust-manager
// distributes at each step checked by crypto/x509.

// renewalStep is one step of the README's walk.
type renewalStep struct {
	name string
	// now is the step's date (render --now, and the time certificates are
	// verified at).
	now string
	// copyFrom, when set, is the example's directory whose snapshots are
	// copied over the package's (the snapshot the step takes).
	copyFrom string
	render   bool
	// live is the testpki fixture of the root in the cluster's Secret.
	live string
	// oldLeavesTrusted says the leaves of the old root verify against
	// what trust-manager distributes.
	oldLeavesTrusted bool
	// rolls says the step changes the Deployments' trust-hash.
	rolls bool
}

var renewalWalk = []renewalStep{
	{name: "before the renewal: first render", now: "2026-11-25", render: true, live: "example-internal-root-old", oldLeavesTrusted: true},
	{name: "cert-manager renews the root in the cluster", now: "2026-12-05", live: "example-internal-root-new", oldLeavesTrusted: true},
	{name: "snapshot of the renewed root, render", now: "2026-12-06", copyFrom: "renewed", render: true, live: "example-internal-root-new", oldLeavesTrusted: true, rolls: true},
	{name: "leaves re-issued, render", now: "2026-12-07", copyFrom: "reissued", render: true, live: "example-internal-root-new", oldLeavesTrusted: true},
	{name: "dropUnusedAfter has passed since the leaves were re-issued, render", now: "2026-12-11", render: true, live: "example-internal-root-new", rolls: true},
}

// TestCertManagerRenewalWalk follows examples/cert-manager-renewal: at
// every step trust-manager's union - the rendered Bundle's inLine sources
// and the root in the live Secret - verifies a leaf cert-manager issues at
// that moment and, until the old root's leaves have been re-issued and
// dropUnusedAfter has passed, the leaves of the old root; the Bundle as
// written, without rotate-certs' pin, would have rejected them the moment
// cert-manager renewed the root. The Deployments roll exactly when the
// distributed set changes.
func TestCertManagerRenewalWalk(t *testing.T) {
	dir := stageExample(t, "cert-manager-renewal")
	requireRenewalFixtures(t, dir)
	oldLeaves := []*x509.Certificate{
		secretCert(t, filepath.Join(dir, "snapshot_orders_orders-api-tls.yaml"), "tls.crt"),
		secretCert(t, filepath.Join(dir, "snapshot_payments_payments-api-tls.yaml"), "tls.crt"),
	}
	written := bundleOf(t, dir)
	hash := trustHashes(t, dir)
	for _, step := range renewalWalk {
		now, err := time.Parse(time.DateOnly, step.now)
		require.NoError(t, err)
		if step.copyFrom != "" {
			copySnapshots(t, filepath.Join(dir, step.copyFrom), dir)
		}
		if step.render {
			_, stderr, err := run(t, dir, binary, "render", ".", "--now", step.now)
			require.NoError(t, err, "%s: %s", step.name, stderr)
		}
		live := testpki.Fixture(step.live)
		union := append(inLineCerts(t, bundleOf(t, dir)), live.Cert)
		probe := testpki.NewNamedLeaf("example-renewal-probe-"+step.now, "probe.orders.svc", live, now, testpki.Days(90))
		require.NoError(t, verifyLeaf(union, probe.Cert, now), "%s: a leaf issued now by the live root", step.name)
		for _, leaf := range oldLeaves {
			err := verifyLeaf(union, leaf, now)
			if step.oldLeavesTrusted {
				require.NoError(t, err, "%s: %s, a leaf of the old root", step.name, leaf.Subject.CommonName)
			} else {
				require.Error(t, err, "%s: the old root must have left", step.name)
			}
		}
		if step.name == renewalWalk[1].name {
			// Without rotate-certs, trust-manager would distribute the
			// live Secret alone: the old leaves fail at once.
			require.Error(t, verifyLeaf(append(inLineCerts(t, written), live.Cert), oldLeaves[0], now), "the Bundle as written keeps no old root")
		}
		if step.copyFrom == "reissued" {
			for _, f := range []string{"snapshot_orders_orders-api-tls.yaml", "snapshot_payments_payments-api-tls.yaml"} {
				require.NoError(t, verifyLeaf(union, secretCert(t, filepath.Join(dir, f), "tls.crt"), now), "%s: the re-issued %s", step.name, f)
			}
		}
		next := trustHashes(t, dir)
		require.Equal(t, step.rolls, next["orders-api"] != hash["orders-api"], "%s: the Deployments roll exactly when the distributed set changes", step.name)
		require.Equal(t, next["orders-api"], next["payments-api"], "%s: both apps read the same bundle", step.name)
		hash = next
		if step.render {
			requireSeen(t, dir, step)
		}
	}
}

// requireSeen checks that the rendered Bundle's rotate-certs.dev/seen holds
// the root the package's snapshot holds at this step, and that check names
// what the step's README comment says.
func requireSeen(t *testing.T, dir string, step renewalStep) {
	t.Helper()
	seen := bundleOf(t, dir).GetAnnotations()["rotate-certs.dev/seen"]
	d, err := pki.DecodePEM([]byte(seen))
	require.NoError(t, err)
	snapshot := secretCert(t, filepath.Join(dir, "snapshot_cert-manager_internal-root-ca.yaml"), "ca.crt")
	require.Len(t, d.Certificates, 1)
	require.True(t, d.Certificates[0].Equal(snapshot), "%s: seen pins the snapshot's root", step.name)
	out, _, err := run(t, dir, binary, "check", ".", "--now", step.now)
	require.NoError(t, err, out)
	switch step.copyFrom {
	case "renewed":
		require.Contains(t, out, "cmctl renew -n orders orders-api")
		require.Contains(t, out, "cmctl renew -n payments payments-api")
	case "reissued":
		require.Contains(t, out, "unused: safe to drop now (leaves on 2026-12-10)", "72h after the render that found it unused, not after its retirement")
	}
}

// requireRenewalFixtures checks that the example's certificates are the
// testpki fixtures its timeline is built from (go run
// ./internal/testpki/fixtures -base64 NAME regenerates them).
func requireRenewalFixtures(t *testing.T, dir string) {
	t.Helper()
	for file, fixture := range map[string]string{
		"snapshot_cert-manager_internal-root-ca.yaml":         "example-internal-root-old",
		"renewed/snapshot_cert-manager_internal-root-ca.yaml": "example-internal-root-new",
		"snapshot_orders_orders-api-tls.yaml":                 "example-orders-api-old",
		"snapshot_payments_payments-api-tls.yaml":             "example-payments-api-old",
		"reissued/snapshot_orders_orders-api-tls.yaml":        "example-orders-api-new",
		"reissued/snapshot_payments_payments-api-tls.yaml":    "example-payments-api-new",
	} {
		require.True(t, secretCert(t, filepath.Join(dir, file), "tls.crt").Equal(testpki.Fixture(fixture).Cert), "%s holds %s", file, fixture)
	}
}

// verifyLeaf verifies leaf (server and client use) against roots at now.
func verifyLeaf(roots []*x509.Certificate, leaf *x509.Certificate, now time.Time) error {
	pool := x509.NewCertPool()
	for _, c := range roots {
		pool.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}})
	return err
}

// secretCert returns the first certificate at key of the one Secret in
// the file at path.
func secretCert(t *testing.T, path, key string) *x509.Certificate {
	t.Helper()
	items := parseStream(t, readFile(t, path))
	require.Len(t, items, 1, path)
	v, found, err := kube.Lookup(items[0], key)
	require.NoError(t, err)
	require.True(t, found, "%s has no %s", path, key)
	d, err := pki.DecodePEM(v.Bytes)
	require.NoError(t, err)
	require.NotEmpty(t, d.Certificates, "%s %s", path, key)
	return d.Certificates[0]
}

// bundleOf returns the Bundle of dir/bundle.yaml.
func bundleOf(t *testing.T, dir string) *yaml.RNode {
	t.Helper()
	items := parseStream(t, readFile(t, filepath.Join(dir, "bundle.yaml")))
	require.Len(t, items, 1)
	return items[0]
}

// trustHashes returns the trust-hash of each Deployment of
// dir/workloads.yaml by name ("" when it has none).
func trustHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, it := range parseStream(t, readFile(t, filepath.Join(dir, "workloads.yaml"))) {
		v, err := it.Pipe(yaml.Lookup("spec", "template", "metadata", "annotations", "rotate-certs.dev/trust-hash"))
		require.NoError(t, err)
		out[it.GetName()] = ""
		if v != nil {
			out[it.GetName()] = v.YNode().Value
		}
	}
	return out
}

// copySnapshots copies the snapshot_*.yaml files of from into to, as a
// fresh `rotate-certs snapshot` of the live Secrets would replace them.
func copySnapshots(t *testing.T, from, to string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(from, "snapshot_*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, from)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, filepath.Base(f)), data, 0o644))
	}
}

// TestCertManagerRenewalBuilds: through kustomize and kpt the example
// renders as `rotate-certs render` does - the Bundle pins the current root,
// the snapshots are read and never emitted, and only the Bundle and the
// Deployments change.
func TestCertManagerRenewalBuilds(t *testing.T) {
	root := testpki.Fixture("example-internal-root-old").Cert
	t.Run("kustomize", func(t *testing.T) {
		kustomize := e2eharness.Tool(t, "kustomize")
		dir := stageExample(t, "cert-manager-renewal")
		out, _ := kustomizeBuild(t, kustomize, dir)
		var pinned []*x509.Certificate
		for _, it := range parseStream(t, out) {
			require.NotEqual(t, "Secret", it.GetKind(), "kustomize must not emit the local-config snapshot %s: it would be applied over the live Secret", it.GetName())
			if it.GetKind() == "Bundle" {
				pinned = inLineCerts(t, it)
			}
		}
		require.Len(t, pinned, 1)
		require.True(t, pinned[0].Equal(root), "the pin holds the current root")
	})
	t.Run("kpt", func(t *testing.T) {
		kpt := e2eharness.Tool(t, "kpt")
		dir := stageExample(t, "cert-manager-renewal")
		kptRender(t, kpt, dir)
		changed, _, err := run(t, dir, "git", "diff", "--name-only")
		require.NoError(t, err)
		require.Equal(t, "bundle.yaml\n", changed, "adopting the Bundle pins what trust-manager already distributes: no workload rolls")
		requireRenderStable(t, kpt, dir, "cert-manager-renewal")
	})
}
