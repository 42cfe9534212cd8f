package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A repository of many clusters, as a GitOps user lays it out: each
// cluster directory is a copy of the envoy-gateway example (its policy and
// objects of the same names), infra/ has manifests under no policy, and a
// Helm chart's template sits beside them.

// monorepo builds the repository in a temporary directory and returns it.
func monorepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, c := range []string{"clusters/prod", "clusters/staging"} {
		require.NoError(t, os.CopyFS(filepath.Join(root, c), os.DirFS(filepath.Join(examplesDir, "envoy-gateway"))))
	}
	e2eharness.PinClock(t, root, e2eharness.StagedNow)
	writeFile(t, root, "infra/namespace.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: infra   # no policy applies here\n")
	writeFile(t, root, "charts/gateway/templates/secret.yaml",
		"{{- if .Values.enabled }}\napiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}\n{{- end }}\n")
	writeFile(t, root, ".github/workflows/ci.yaml", "on: [push]\njobs: {}\n")
	return root
}

func writeFile(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
}

// TestRenderEveryPackage: `render .` without --policy renders each
// cluster with its own policy - the same object names in two packages
// are no conflict -, prints one line per file written, leaves the files
// under no policy and the Helm template alone (with a note), and a second
// render changes nothing.
func TestRenderEveryPackage(t *testing.T) {
	root := monorepo(t)
	before := e2eharness.Files(t, root)
	stdout, stderr, code := runIn(t, root, "", "render", ".")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "wrote clusters/prod/ratelimit.yaml\nwrote clusters/prod/trust.yaml\n"+
		"wrote clusters/staging/ratelimit.yaml\nwrote clusters/staging/trust.yaml\n", stdout)
	require.Contains(t, stderr, "rotate-certs render: note: charts/gateway/templates/secret.yaml: a template ({{ ... }}), not YAML: skipped; list it in .krmignore")
	require.Contains(t, stderr, "rotate-certs render: note: 1 file(s) under . are in no package (no RotationPolicy in their directory or above): left as they are")
	require.Contains(t, stderr, "rotate-certs render: rendered 2 packages: 4 files written, 0 of them created")

	after := e2eharness.Files(t, root)
	for path, text := range before {
		switch path {
		case "clusters/prod/ratelimit.yaml", "clusters/prod/trust.yaml", "clusters/staging/ratelimit.yaml", "clusters/staging/trust.yaml":
			require.NotEqual(t, text, after[path], path)
		default:
			require.Equal(t, text, after[path], "%s is not rendered", path)
		}
	}
	require.Equal(t, after["clusters/prod/trust.yaml"], after["clusters/staging/trust.yaml"], "each package renders like the example alone")
	require.Len(t, after, len(before), "no file created, no lock left")

	stdout, stderr, code = runIn(t, root, "", "render", ".")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stdout, "nothing to write the second time")
	require.Contains(t, stderr, "rendered 2 packages: nothing changed")
	require.Equal(t, after, e2eharness.Files(t, root))
}

// TestRenderEveryPackageAllOrNothing: when one package fails, no file of
// any package is written, and the failure names its file.
func TestRenderEveryPackageAllOrNothing(t *testing.T) {
	root := monorepo(t)
	policy := filepath.Join(root, "clusters/staging/rotation-policy.yaml")
	data, err := os.ReadFile(policy)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(policy, bytes.Replace(data, []byte("{name: envoy-gateway, namespace"), []byte("{name: envoy-gatway, namespace"), 1), 0o644))
	before := e2eharness.Files(t, root)
	stdout, stderr, code := runIn(t, root, "", "render", ".")
	require.Equal(t, 1, code, stderr)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "Secret envoy-gateway-system/envoy-gatway is not in the input")
	require.Contains(t, stderr, "clusters/staging/rotation-policy.yaml")
	require.Contains(t, stderr, "rotate-certs render: 1 of 2 packages failed; nothing was written")
	require.Equal(t, before, e2eharness.Files(t, root), "prod rendered fine, and is not written either")
}

// TestRenderDryRun: --dry-run writes nothing (no lock file either) and
// prints a unified diff that git apply takes: applied, it gives exactly
// what the render writes.
func TestRenderDryRun(t *testing.T) {
	root := monorepo(t)
	gitInit(t, root, nil)
	before := e2eharness.Files(t, root)
	diff, stderr, code := runIn(t, root, "", "render", ".", "--dry-run")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, before, e2eharness.Files(t, root), "a dry run writes nothing")
	require.Contains(t, diff, "--- a/clusters/prod/trust.yaml\n+++ b/clusters/prod/trust.yaml\n@@ ")
	require.Contains(t, diff, "+    rotate-certs.dev/bundle-hash: ")

	rendered := t.TempDir()
	require.NoError(t, os.CopyFS(rendered, os.DirFS(root)))
	_, stderr, code = runIn(t, rendered, "", "render", ".")
	require.Equal(t, 0, code, stderr)

	patch := filepath.Join(t.TempDir(), "render.diff")
	require.NoError(t, os.WriteFile(patch, []byte(diff), 0o644))
	_, stderr, err := run(t, root, "git", "apply", "--whitespace=nowarn", patch)
	require.NoError(t, err, stderr)
	applied, want := e2eharness.Files(t, root), e2eharness.Files(t, rendered)
	require.Equal(t, len(want), len(applied))
	for path, text := range want {
		require.Equal(t, text, applied[path], "%s: the diff applied is the render", path)
	}

	// With a new target (no trust.yaml), the diff creates the file.
	root = monorepo(t)
	require.NoError(t, os.Remove(filepath.Join(root, "clusters/prod/trust.yaml")))
	diff, _, code = runIn(t, root, "", "render", "clusters/prod", "--dry-run")
	require.Equal(t, 0, code)
	require.Contains(t, diff, "--- /dev/null\n+++ b/clusters/prod/secret_envoy-gateway-system_envoy-gateway-trust.yaml\n@@ -0,0 +1,")
}

// TestCheckEveryPackage: `check .` on a repository whose clusters hold
// objects of the same names checks each package with its own policy
// (before packages, this was "target ... appears 2 times in the input"),
// names the package in every row and in the JSON, and reports what no
// policy covers with package "".
func TestCheckEveryPackage(t *testing.T) {
	root := monorepo(t)
	writeFile(t, root, "infra/ca.yaml", caSecret("infra-ca", "default", "ca-2026"))
	stdout, stderr, code := runIn(t, root, "", "check", ".", "--now", checkNow, "-o", "json")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "rotate-certs check: note: charts/gateway/templates/secret.yaml: a template")
	var rep struct {
		Entries []struct {
			Package  string `json:"package"`
			Resource struct {
				Name string `json:"name"`
			} `json:"resource"`
		} `json:"entries"`
		Reissues []struct {
			Package string `json:"package"`
		} `json:"reissues"`
		Packages []struct {
			Path     string `json:"path"`
			Policies []struct {
				Name string `json:"name"`
				File string `json:"file"`
			} `json:"policies"`
		} `json:"packages"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	count := map[string]int{}
	for _, e := range rep.Entries {
		count[e.Package]++
	}
	require.Equal(t, map[string]int{"clusters/prod": 4, "clusters/staging": 4, "": 1}, count)
	require.Len(t, rep.Reissues, 2, "ratelimit-client's old leaf, once per cluster")
	require.Equal(t, "clusters/prod", rep.Reissues[0].Package)
	require.Equal(t, "clusters/staging", rep.Reissues[1].Package)
	require.Len(t, rep.Packages, 2)
	require.Equal(t, "clusters/prod", rep.Packages[0].Path)
	require.Equal(t, "gateway-trust", rep.Packages[0].Policies[0].Name)
	require.Equal(t, "clusters/prod/rotation-policy.yaml", rep.Packages[0].Policies[0].File)

	// The table has the package column and cuts nothing (kubectl never
	// truncates a name); -o wide adds columns; --no-headers only rows.
	table, _, code := runIn(t, root, "", "check", ".", "--now", checkNow)
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	require.True(t, strings.HasPrefix(lines[0], "PACKAGE "), lines[0])
	require.NotContains(t, table, "…")
	require.Contains(t, table, "Secret envoy-gateway-system/envoy-gateway-trust", "nothing is cut")
	require.Contains(t, table, "(none)", "the infra CA is under no policy")
	require.Contains(t, table, "now 2026-11-22T00:00:00Z, warn within 30d, fail within 7d")

	wide, _, code := runIn(t, root, "", "check", ".", "--now", checkNow, "-o", "wide")
	require.Equal(t, 0, code)
	require.Contains(t, wide, "PACKAGE           RESOURCE")
	require.Contains(t, wide, "ISSUER")
	require.Contains(t, wide, "SHA256")
	require.Contains(t, wide, "Secret envoy-gateway-system/envoy-gateway-trust", "nothing is cut in wide")

	rows, _, code := runIn(t, root, "", "check", ".", "--now", checkNow, "--no-headers")
	require.Equal(t, 0, code)
	entryRows, reissueRows, found := strings.Cut(strings.TrimRight(rows, "\n"), "\n\n")
	require.True(t, found, "the re-issue rows follow after an empty line:\n%s", rows)
	require.Len(t, strings.Split(entryRows, "\n"), 9)
	require.Len(t, strings.Split(reissueRows, "\n"), 2)
	require.NotContains(t, rows, "RESOURCE")
	require.NotContains(t, rows, "certificate(s)")
}

// TestCheckExamples: the repository's own examples/ directory, a
// repository of many packages, checks in one call, on the wall clock.
func TestCheckExamples(t *testing.T) {
	stdout, stderr, code := runIn(t, examplesDir, "", "check", ".")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.NotContains(t, stderr, "appears 2 times")
	require.Contains(t, stdout, "PACKAGE")
}

// TestIgnoreRulesEverywhere: render, check, init and snapshot read a
// directory by the same rules: hidden directories and what .krmignore
// lists are never read - a broken file there breaks none of them.
func TestIgnoreRulesEverywhere(t *testing.T) {
	root := monorepo(t)
	broken := "apiVersion: v1\nkind: Secret\nmetadata: {name: broken\n"
	writeFile(t, root, "clusters/prod/ignored/broken.yaml", broken)
	writeFile(t, root, "clusters/prod/.cache/broken.yaml", broken)
	writeFile(t, root, "clusters/prod/.krmignore", "kustomization.yaml\nignored/\n")
	for _, args := range [][]string{
		{"render", ".", "--dry-run"},
		{"render", "clusters/prod", "--policy", "clusters/prod/rotation-policy.yaml", "--dry-run"},
		{"check", ".", "--now", checkNow},
		{"init", "clusters/prod", "--now", checkNow},
	} {
		_, stderr, code := runIn(t, root, "", args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		require.NotContains(t, stderr, "broken", "%v", args)
	}
	// The Helm template is skipped by init with the note render and check
	// print, naming .krmignore.
	_, stderr, code := runIn(t, root, "", "init", "charts", "--now", checkNow)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "rotate-certs init: charts/gateway/templates/secret.yaml: a template ({{ ... }}), not YAML: skipped; list it in .krmignore")

	// Without the .krmignore line, the broken file is read - and named.
	writeFile(t, root, "clusters/prod/.krmignore", "kustomization.yaml\n")
	_, stderr, code = runIn(t, root, "", "check", ".", "--now", checkNow)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "clusters/prod/ignored/broken.yaml")
	_, stderr, code = runIn(t, root, "", "snapshot", "clusters/prod/ignored")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "clusters/prod/ignored/broken.yaml")
}

// TestFIFOIsAnErrorNeverAHang: a named pipe called *.yaml (made with
// mkfifo) in a directory render, check and init read is an error naming
// it - reading it would wait forever. The context's deadline only stops
// a hang; the assertion is on the exit status and the message.
func TestFIFOIsAnErrorNeverAHang(t *testing.T) {
	root := monorepo(t)
	fifo := filepath.Join(root, "clusters/prod/pipe.yaml")
	require.NoError(t, unix.Mkfifo(fifo, 0o644))
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"render", "."}, 1},
		{[]string{"render", ".", "--dry-run"}, 1},
		{[]string{"check", ".", "--now", checkNow}, 2},
		{[]string{"init", "clusters/prod"}, 1},
		{[]string{"check", "clusters/prod/pipe.yaml"}, 2},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		r := e2eharness.Cmd{Dir: root, Ctx: ctx}.Run(t, binary, tc.args...)
		require.NotErrorIs(t, ctx.Err(), context.DeadlineExceeded, "%v hung on the FIFO", tc.args)
		cancel()
		out := r.Stdout + r.Stderr
		require.Equal(t, tc.code, r.Code, "%v: %s", tc.args, out)
		require.Contains(t, out, "pipe.yaml: a named pipe (FIFO), not a regular file: not read", "%v", tc.args)
	}
}

// hostileDirectoryNames are directory names a user may give a cluster's
// package: each is a package like any other, whatever it looks like (a run
// of CamelCase and digits once read as key material and its package was
// skipped with exit 0).
var hostileDirectoryNames = []string{
	"Clusters/Prod2/EuWest1/Team7/Apps/Gateway",
	"clusters/prød-eu",
	"clusters/my staging",
	"クラスター/本番",
	"clusters/ProdEuWest1Team7AppsGateway2Blue3Green4",
}

// looksEncoded is the one name above that messages describe rather than
// show (a 39-character run that changes case and digits as encoded bytes
// do): it is rendered and checked all the same.
const looksEncoded = "clusters/ProdEuWest1Team7AppsGateway2Blue3Green4"

// TestPackagesWithAnyDirectoryName: render, check and init treat every
// directory name the file system allows as a package like any other:
// render . renders each one, render of the directory alone renders it,
// check names it as its package, init reads it.
func TestPackagesWithAnyDirectoryName(t *testing.T) {
	root := t.TempDir()
	for _, name := range hostileDirectoryNames {
		require.NoError(t, os.CopyFS(filepath.Join(root, name), os.DirFS(filepath.Join(examplesDir, "envoy-gateway"))))
	}
	e2eharness.PinClock(t, root, e2eharness.StagedNow)
	stdout, stderr, code := runIn(t, root, "", "render", ".", "--dry-run")
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stderr, "in no package")
	for _, name := range hostileDirectoryNames {
		require.Contains(t, stdout, "+++ b/"+name+"/trust.yaml\n", name)
	}

	stdout, stderr, code = runIn(t, root, "", "check", ".", "--now", checkNow, "-o", "json")
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Packages []struct {
			Path string `json:"path"`
		} `json:"packages"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	var paths, want []string
	for _, p := range rep.Packages {
		paths = append(paths, p.Path)
	}
	for _, name := range hostileDirectoryNames {
		if name == looksEncoded {
			name = "<a string of 48 bytes>" // shown safely, checked all the same
		}
		want = append(want, name)
	}
	require.ElementsMatch(t, want, paths)

	for _, name := range hostileDirectoryNames {
		stdout, stderr, code = runIn(t, root, "", "render", name)
		require.Equal(t, 0, code, "%s: %s", name, stderr)
		require.Equal(t, "wrote "+name+"/ratelimit.yaml\nwrote "+name+"/trust.yaml\n", stdout, name)
		stdout, stderr, code = runIn(t, root, "", "init", name, "--now", checkNow)
		require.Equal(t, 0, code, "%s: %s", name, stderr)
		require.Contains(t, stdout, "kind: RotationPolicy", name)
	}
}

// TestRenderPolicyFlagLeavesNestedPackages: with --policy FILE, a deeper
// directory holding its own RotationPolicy is still a package of its own,
// rendered with its own policy and left out of the outer one (it once
// failed on the duplicate target the two packages hold).
func TestRenderPolicyFlagLeavesNestedPackages(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{".", "nested/prod"} {
		require.NoError(t, os.CopyFS(filepath.Join(root, dir), os.DirFS(filepath.Join(examplesDir, "envoy-gateway"))))
	}
	e2eharness.PinClock(t, root, e2eharness.StagedNow)
	stdout, stderr, code := runIn(t, root, "", "render", ".", "--policy", "rotation-policy.yaml")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "wrote nested/prod/ratelimit.yaml\nwrote nested/prod/trust.yaml\nwrote ratelimit.yaml\nwrote trust.yaml\n", stdout)
	require.Contains(t, stderr, "rendered 2 packages")
	after := e2eharness.Files(t, root)
	require.Equal(t, after["trust.yaml"], after["nested/prod/trust.yaml"], "each package renders like the example alone")
}
