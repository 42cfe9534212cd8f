package main

import (
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// runBinary runs the built rotate-certs in dir with stdin and returns its
// output and exit status (-1 when it could not be started).
func runBinary(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return o.String(), e.String(), 0
	case errors.As(err, &exit):
		return o.String(), e.String(), exit.ExitCode()
	}
	t.Fatalf("running %s: %v", binary, err)
	return "", "", -1
}

// A policy or a resource whose metadata, labels or annotations are not
// maps made kyaml's accessors index a list as a map and panic, in every
// mode that reads them. Each is now an error naming the field, and no mode
// panics: function mode, render --policy, check --policy, check and init
// over such a resource.
func TestMalformedMetadataIsAnErrorInEveryMode(t *testing.T) {
	for _, tc := range []struct {
		name, metadata, field string
	}{
		{"metadata is a list", "metadata: [a]", "metadata"},
		{"annotations are a list", "metadata: {name: p, annotations: [x]}", "metadata.annotations"},
		{"labels are a list of three", "metadata: {name: p, labels: [x, y, z]}", "metadata.labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			policy := "apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\n" + tc.metadata + "\nspec: {}\n"
			resource := "apiVersion: v1\nkind: Secret\n" + tc.metadata + "\ndata: {}\n"
			require.NoError(t, os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(policy), 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "pkg"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "pkg", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"), 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "bad"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "bad", "secret.yaml"), []byte(resource), 0o644))
			indented := "  " + strings.ReplaceAll(strings.TrimSuffix(policy, "\n"), "\n", "\n  ")
			list := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n" + indented + "\nitems: []\n"
			for _, m := range []struct {
				name  string
				stdin string
				args  []string
				// skips: the mode goes on without the resource (init scans
				// whole repositories and skips what it cannot read, saying so)
				skips bool
			}{
				{"function mode", list, nil, false},
				{"render --policy", "", []string{"render", "pkg", "--policy", "policy.yaml"}, false},
				{"check --policy", "", []string{"check", "pkg", "--policy", "policy.yaml"}, false},
				{"check over the resource", "", []string{"check", "bad"}, false},
				{"init over the resource", "", []string{"init", "bad"}, true},
			} {
				t.Run(m.name, func(t *testing.T) {
					_, stderr, code := runBinary(t, dir, m.stdin, m.args...)
					require.NotContains(t, stderr, "panic", "no input may panic")
					require.NotContains(t, stderr, "goroutine")
					if m.skips {
						require.Contains(t, stderr, "skipped bad/secret.yaml: resource 1 (v1 Secret)")
					} else {
						require.NotEqual(t, 0, code, "stderr: %s", stderr)
					}
					require.Contains(t, stderr, tc.field, "the error names the field")
					require.Contains(t, stderr, "is a YAML list")
				})
			}
		})
	}
}

// check lists a certificate block that encoding/pem would skip (a damaged
// body line in the middle of a bundle) as a problem row naming the block,
// next to the certificates that read, and exits 2; it exited 0.
func TestCheckReportsABrokenBlockBetweenGoodOnes(t *testing.T) {
	second := strings.SplitAfter(string(testpki.Fixture("ca-2027").PEM()), "\n")
	second[2] = "!!" + second[2][2:]
	value := string(testpki.Fixture("ca-2026").PEM()) + strings.Join(second, "") + string(testpki.Fixture("signer-b-1").PEM())
	in := "apiVersion: v1\nkind: Secret\nmetadata: {name: roots, namespace: default}\ndata:\n  ca.crt: " + base64.StdEncoding.EncodeToString([]byte(value)) + "\n"
	out, stderr, code := runCLI(t, in, "check", "-", "--now", checkNow)
	require.Equal(t, 2, code, "stderr: %s", stderr)
	require.Contains(t, out, "Secret default/roots data.ca.crt: the 2nd PEM block (line 11) is malformed: its body is not valid base64")
	require.Contains(t, out, "2 certificate(s)")
	require.Contains(t, stderr, "check: 1 value(s) hold certificate data that does not parse")
}
