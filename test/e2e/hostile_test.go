package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

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
					_, stderr, code := runIn(t, dir, m.stdin, m.args...)
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

// --policy FILE holding two documents rendered with the first and ignored
// the second; it is an error, in render and in check.
func TestPolicyFileWithTwoDocumentsIsAnError(t *testing.T) {
	dir := t.TempDir()
	one := "apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata: {name: p}\nspec: {}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "two.yaml"), []byte(one+"---\n"+one), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "none.yaml"), []byte("# nothing\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dup.yaml"), []byte(one+"spec: {}\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "pkg"), 0o755))
	for file, want := range map[string]string{
		"two.yaml":  "holds 2 YAML documents",
		"none.yaml": "holds no YAML document",
		"dup.yaml":  `dup.yaml:5: mapping key "spec" already defined at line 4`,
	} {
		for _, args := range [][]string{{"render", "pkg", "--policy", file}, {"check", "pkg", "--policy", file}} {
			t.Run(file+" "+args[0], func(t *testing.T) {
				_, stderr, code := runIn(t, dir, "", args...)
				require.NotEqual(t, 0, code)
				require.Contains(t, stderr, want)
			})
		}
	}
}
