package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
)

// TestFunctionModeSaysWhatCameAndWhatFits: the real binary in function mode
// given what a person types by mistake says what it received and which
// command fits, exits 2 (how it was called is wrong) and writes nothing on
// stdout.
func TestFunctionModeSaysWhatCameAndWhatFits(t *testing.T) {
	manifests := readFile(t, filepath.Join(examplesDir, "envoy-gateway", "gateway-ca.yaml")) + "---\n" +
		readFile(t, filepath.Join(examplesDir, "envoy-gateway", "trust.yaml"))
	for _, tc := range []struct {
		name, stdin string
		want        []string
	}{
		{"empty stdin", "", []string{"function mode read nothing on stdin", "rotate-certs render DIR", "rotate-certs check DIR"}},
		{"plain manifests", manifests, []string{
			"received 2 plain manifest(s) (Secret envoy-gateway-system/envoy-gateway, Secret envoy-gateway-system/envoy-gateway-trust)",
			"rotate-certs render DIR", "rotate-certs check -"}},
		{"a kubectl List", "apiVersion: v1\nkind: List\nitems: []\n", []string{"received a List of 0 item(s)", "rotate-certs check -", "rotate-certs snapshot -"}},
		{"a ResourceList without functionConfig", "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n",
			[]string{"the ResourceList has no functionConfig", "--fn-config rotation-policy.yaml", "configPath", "transformers:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runIn(t, t.TempDir(), tc.stdin)
			require.Equal(t, 2, code, stderr)
			for _, w := range tc.want {
				require.Contains(t, stderr, w)
			}
			require.NotContains(t, stderr, "RotationPolicy :", "no message about a nameless policy")
			if !strings.Contains(tc.name, "ResourceList") {
				require.Empty(t, stdout, "nothing on stdout for input that is not a ResourceList")
			}
		})
	}
}

// TestKptFnEvalWithoutFnConfig: kpt fn eval without --fn-config sends an
// empty ConfigMap as the functionConfig; the function says to pass
// --fn-config, and kpt shows it.
func TestKptFnEvalWithoutFnConfig(t *testing.T) {
	kpt := e2eharness.Tool(t, "kpt")
	dir := stageExample(t, "envoy-gateway")
	exe := filepath.Join(filepath.Dir(filepath.Dir(dir)), "bin", "rotate-certs")
	out, stderr, _ := run(t, dir, kpt, "fn", "eval", ".", "--exec", exe)
	all := out + stderr
	require.Contains(t, all, "kpt fn eval sends an empty one when --fn-config is not given: pass --fn-config rotation-policy.yaml")
	require.Contains(t, all, "Exit code: 2")
}

// TestMissingSourceNamesTheNearest: a source that is not in the input
// names the nearest object of its kind and the keys it has; a key that is
// not in the object names the keys it does have.
func TestMissingSourceNamesTheNearest(t *testing.T) {
	dir := stageExample(t, "envoy-gateway")
	policy := filepath.Join(dir, "rotation-policy.yaml")
	text := readFile(t, policy)
	for _, tc := range []struct {
		source, want string
	}{
		{"{name: envoy-gatway, namespace: envoy-gateway-system, key: ca.crt}",
			"source Secret envoy-gateway-system/envoy-gatway is not in the input (mark it optional: true if it may be absent); the nearest is Secret envoy-gateway-system/envoy-gateway (keys ca.crt, tls.crt, tls.key)"},
		{"{name: envoy-gateway, namespace: gateway, key: ca.crt}",
			"the nearest is Secret envoy-gateway-system/envoy-gateway (keys ca.crt, tls.crt, tls.key)"},
		{"{name: envoy-gateway, namespace: envoy-gateway-system, key: ca.pem}",
			"source Secret envoy-gateway-system/envoy-gateway has no key ca.pem; it has keys ca.crt, tls.crt, tls.key"},
	} {
		require.NoError(t, os.WriteFile(policy, []byte(strings.Replace(text, "{name: envoy-gateway, namespace: envoy-gateway-system, key: ca.crt}", tc.source, 1)), 0o644))
		_, stderr, code := runIn(t, dir, "", "render", ".")
		require.Equal(t, 1, code, stderr)
		require.Contains(t, stderr, tc.want)
		require.NotContains(t, stderr, "PRIVATE KEY")
	}
}

// TestExitCodes: the same statuses on every command - 0 success, 1 the
// command ran and failed, 2 a mistake on the command line.
func TestExitCodes(t *testing.T) {
	dir := stageExample(t, "envoy-gateway")
	for _, tc := range []struct {
		args  []string
		stdin string
		code  int
	}{
		{[]string{"version"}, "", 0},
		{[]string{"--version"}, "", 0},
		{[]string{"-v"}, "", 2},
		{[]string{"bogus"}, "", 2},
		{[]string{"render"}, "", 2},
		{[]string{"render", ".", "--dry-run", "--bogus"}, "", 2},
		{[]string{"render", ".", "--dry-run"}, "", 0},
		{[]string{"render", "missing-dir"}, "", 1},
		{[]string{"check", ".", "-o", "yaml"}, "", 2},
		{[]string{"check", ".", "--now", checkNow}, "", 0},
		{[]string{"init", ".", "--now", "yesterday"}, "", 2},
		{[]string{"init", "missing-dir"}, "", 1},
		{[]string{"snapshot", "-"}, "kind: [\n", 1},
		{[]string{"snapshot", "--bogus"}, "", 2},
		{[]string{"helm-post-renderer"}, "", 2},
		{nil, "", 2},
	} {
		_, stderr, code := runIn(t, dir, tc.stdin, tc.args...)
		require.Equal(t, tc.code, code, "rotate-certs %v: %s", tc.args, stderr)
	}
}
