package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/walk"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// End-to-end tests of target.additionalFormats and `rotate-certs init`,
// with the binary built by TestMain (main_test.go).

// addFormats adds binary truststores to the envoy-gateway example's policy.
func addFormats(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "rotation-policy.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	const anchor = "      name: envoy-gateway-trust\n"
	require.Contains(t, string(data), anchor)
	withFormats := strings.Replace(string(data), anchor, anchor+
		"      additionalFormats:\n"+
		"        pkcs12: {key: truststore.p12, password: \"\"}\n"+
		"        jks: {key: truststore.jks, password: changeit}\n", 1)
	require.NoError(t, os.WriteFile(path, []byte(withFormats), 0o644))
}

// TestFormatsEndToEnd renders the envoy-gateway example with PKCS#12 and
// JKS truststores through kustomize and through `rotate-certs render`:
// keytool reads both stores and lists both CAs, two kustomize builds are
// byte-identical, and a second render leaves every file as it was.
func TestFormatsEndToEnd(t *testing.T) {
	target := kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}
	want := []string{"example-ca-new", "example-ca-old"}

	t.Run("kustomize", func(t *testing.T) {
		kustomize := e2eharness.Tool(t, "kustomize")
		dir := stageExample(t, "envoy-gateway")
		addFormats(t, dir)
		out, _ := kustomizeBuild(t, kustomize, dir)
		items := parseStream(t, out)
		require.Equal(t, want, bundleSubjects(t, items, target, "ca.crt"))
		checkStores(t, items, target, len(want))
	})

	t.Run("render twice", func(t *testing.T) {
		dir := stageExample(t, "envoy-gateway")
		addFormats(t, dir)
		_, stderr, err := run(t, dir, binary, "render", ".", "--policy", "rotation-policy.yaml")
		require.NoError(t, err, stderr)
		items := readPackage(t, dir)
		require.Equal(t, want, bundleSubjects(t, items, target, "ca.crt"))
		checkStores(t, items, target, len(want))
		first := e2eharness.Files(t, dir)
		_, stderr, err = run(t, dir, binary, "render", ".", "--policy", "rotation-policy.yaml")
		require.NoError(t, err, stderr)
		require.Equal(t, first, e2eharness.Files(t, dir), "a re-render must leave every byte as it was")
	})
}

// checkStores checks that the target holds both truststores, then (in a
// subtest that skips without keytool, naming `make test-tools`) writes them
// to files and has the JDK's keytool list them: both read, with certs
// trusted certificates each (fn/truststore checks the formats in depth).
func checkStores(t *testing.T, items []*yaml.RNode, target kube.Key, certs int) {
	t.Helper()
	node := findNode(items, target)
	require.NotNil(t, node, "%s not in the output", target)
	type store struct {
		key, storetype, password string
		bytes                    []byte
	}
	stores := []store{{"truststore.p12", "PKCS12", "", nil}, {"truststore.jks", "JKS", "changeit", nil}}
	for i, s := range stores {
		v, found, err := kube.Lookup(node, s.key)
		require.NoError(t, err)
		require.True(t, found, "%s has no %s", target, s.key)
		require.Equal(t, "data."+s.key, v.Field)
		stores[i].bytes = v.Bytes
	}
	t.Run("keytool", func(t *testing.T) {
		keytool := e2eharness.Tool(t, "keytool")
		for _, s := range stores {
			path := filepath.Join(t.TempDir(), s.key)
			require.NoError(t, os.WriteFile(path, s.bytes, 0o600))
			args := []string{"-list", "-keystore", path, "-storetype", s.storetype}
			if s.password != "" {
				args = append(args, "-storepass", s.password)
			}
			r := e2eharness.Cmd{Stdin: "\n"}.Run(t, keytool, args...)
			out := r.Stdout + r.Stderr
			require.NoError(t, r.Err, "%s: %s", s.key, out)
			require.Contains(t, out, fmt.Sprintf("Your keystore contains %d entries", certs), s.key)
			require.Equal(t, certs, strings.Count(out, "trustedCertEntry"), "%s: %s", s.key, out)
		}
	})
}

func findNode(items []*yaml.RNode, k kube.Key) *yaml.RNode {
	for _, it := range items {
		if kube.KeyOf(it) == k {
			return it
		}
	}
	return nil
}

// TestInitEndToEnd runs `rotate-certs init` on every example, as a new user
// would (the example's own policy removed), and renders the example with
// the policy it wrote: the render succeeds, and a second render changes
// nothing. It also reads the manifests from stdin.
func TestInitEndToEnd(t *testing.T) {
	// Every example directory with a rotation-policy.yaml that render reads
	// (the Argo CD and CI examples keep theirs below their top level;
	// examples/helm's is Helm's, out of every walk by its .krmignore).
	var names []string
	found := walk.Dir(examplesDir, walk.Manifests)
	require.Empty(t, found.Problems)
	for _, path := range found.Files {
		if filepath.Base(path) == "rotation-policy.yaml" {
			rel, _ := filepath.Rel(examplesDir, filepath.Dir(path))
			names = append(names, rel)
		}
	}
	ran := 0
	for _, name := range names {
		ran++
		t.Run(name, func(t *testing.T) {
			dir := stageExample(t, name)
			require.NoError(t, os.Remove(filepath.Join(dir, "rotation-policy.yaml")))
			policy, stderr, err := run(t, dir, binary, "init", ".")
			require.NoError(t, err, stderr)
			require.Contains(t, policy, "kind: RotationPolicy")
			if !strings.Contains(policy, "# CA found in ") {
				// The Cluster API examples hold control planes, not CAs.
				require.Contains(t, policy, "# Cluster API control planes found: ", "init found neither a CA nor a control plane")
			}
			require.NotContains(t, policy, "PRIVATE KEY")

			// The same manifests on stdin give the same policy, file
			// names aside.
			var all strings.Builder
			for _, f := range yamlFilesIn(t, dir) {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				all.WriteString("---\n" + string(b))
			}
			fromStdin, stderr, code := runIn(t, "", all.String(), "init", "-")
			require.Equal(t, 0, code, stderr)
			require.Equal(t, stripComments(policy), stripComments(fromStdin))

			require.NoError(t, os.WriteFile(filepath.Join(dir, "init-policy.yaml"), []byte(policy), 0o644))
			_, stderr, err = run(t, dir, binary, "render", ".", "--policy", "init-policy.yaml")
			require.NoError(t, err, "render with the init policy:\n%s\n%s", stderr, policy)
			first := e2eharness.Files(t, dir)
			_, stderr, err = run(t, dir, binary, "render", ".", "--policy", "init-policy.yaml")
			require.NoError(t, err, stderr)
			require.Equal(t, first, e2eharness.Files(t, dir), "the second render must change nothing")
		})
	}
	require.NotZero(t, ran, "no example found under %s", examplesDir)
}

// TestInitSkipsExpiredCA: a repository that still holds an expired CA gets
// a policy that renders: init leaves the expired CA out and says so.
func TestInitSkipsExpiredCA(t *testing.T) {
	dir := stageExample(t, "envoy-gateway")
	require.NoError(t, os.Remove(filepath.Join(dir, "rotation-policy.yaml")))
	expired := testpki.NewCA("legacy-root", testpki.Date(2024, 1, 1), testpki.Days(365))
	legacy := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: legacy-root, namespace: ns3}\nstringData:\n  ca.crt: %q\n", expired.PEM())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "legacy-root.yaml"), []byte(legacy), 0o644))

	policy, stderr, err := run(t, dir, binary, "init", ".", "--now", "2026-11-22")
	require.NoError(t, err, stderr)
	require.Contains(t, stderr, "Secret ns3/legacy-root holds only CA certificates that have expired: not proposed as a source")
	require.NotContains(t, policy, "name: legacy-root", "the expired CA must not be a source")
	require.Contains(t, policy, "envoy-gateway")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "init-policy.yaml"), []byte(policy), 0o644))
	_, stderr, err = run(t, dir, binary, "render", ".", "--policy", "init-policy.yaml")
	require.NoError(t, err, "render with the init policy:\n%s\n%s", stderr, policy)

	_, stderr, err = run(t, dir, binary, "init", ".", "--now", "yesterday")
	require.Error(t, err)
	require.Contains(t, stderr, "--now")
}

func yamlFilesIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// stripComments drops comment lines (they name the files the CAs came
// from, which differ between a directory and stdin).
func stripComments(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}
