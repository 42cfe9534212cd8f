package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
