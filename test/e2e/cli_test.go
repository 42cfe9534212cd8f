package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
)

// TestVersionStamping builds the binary with -ldflags -X as `make build`
// and the Dockerfile do, and checks that `--version` and `version` print
// the version and commit passed in, and that an unstamped build says so.
func TestVersionStamping(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	stamped, err := e2eharness.Build(t.TempDir(), "-X main.version=v1.2.3-test -X main.commit=0123456789abcdef")
	require.NoError(t, err)

	for _, tc := range []struct {
		bin  string
		args []string
		want string
	}{
		{stamped, []string{"--version"}, "rotate-certs v1.2.3-test (commit 0123456789abcdef)\n"},
		{stamped, []string{"version"}, "rotate-certs v1.2.3-test (commit 0123456789abcdef)\n"},
		// TestMain's build (e2eharness.Main): no stamp, and -buildvcs may
		// be off.
		{binary, []string{"version"}, "rotate-certs dev (commit "},
	} {
		name := strings.Join(tc.args, " ")
		if tc.bin == binary {
			name += " unstamped"
		}
		t.Run(name, func(t *testing.T) {
			stdout, stderr, err := run(t, "", tc.bin, tc.args...)
			require.NoError(t, err, stderr)
			if strings.HasSuffix(tc.want, "\n") {
				require.Equal(t, tc.want, stdout)
			} else {
				require.True(t, strings.HasPrefix(stdout, tc.want), stdout)
			}
			require.Empty(t, stderr)
		})
	}
	// -v is no shorthand of --version: kubectl users mean verbosity by it.
	t.Run("-v", func(t *testing.T) {
		stdout, stderr, code := runIn(t, "", "", "-v")
		require.Equal(t, 2, code, "a usage error")
		require.Equal(t, "rotate-certs: unknown shorthand flag: 'v' in -v (see 'rotate-certs --help')\n", stdout+stderr)
	})
}

// TestErrorsAreOneLinePerProblem runs failing commands and checks what a
// user sees on stderr: exit code 1 (2 for a mistake on the command line,
// the same on every command), one line per problem, each naming the
// resource (kind namespace/name) and the field, or for command-line
// mistakes the command and where its help is. Nothing reaches stdout.
func TestErrorsAreOneLinePerProblem(t *testing.T) {
	for _, tc := range append(renderErrorCases(), commandErrorCases()...) {
		t.Run(tc.name, func(t *testing.T) {
			dir := stageExample(t, "envoy-gateway")
			args, stdin := tc.setup(t, dir)
			before := e2eharness.Files(t, dir)
			stdout, stderr, code := runIn(t, dir, stdin, args...)
			want := tc.code
			if want == 0 {
				want = 1
			}
			require.Equal(t, want, code, "the command must fail")
			if args != nil {
				require.Empty(t, stdout, "errors go to stderr")
			} else {
				require.NotContains(t, stdout, "\nitems:\n- ", "no output resources on error")
			}
			require.Equal(t, before, e2eharness.Files(t, dir), "a failed command writes nothing")

			// Problem lines: "error: ..." lines of the function's report,
			// or the single line of a command-line error. Indented lines
			// are the warnings summary that precedes errors.
			var problems []string
			for _, line := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
				if strings.HasPrefix(line, "error: ") || !strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "rotate-certs: ") {
					problems = append(problems, line)
				}
			}
			require.Len(t, problems, len(tc.lines), "stderr:\n%s", stderr)
			for i, want := range tc.lines {
				for _, s := range want {
					require.Contains(t, problems[i], s, "stderr:\n%s", stderr)
				}
			}
		})
	}
}

// errorCase is one failing command of TestErrorsAreOneLinePerProblem.
type errorCase struct {
	name  string
	setup func(t *testing.T, dir string) (args []string, stdin string)
	// every problem line must contain every string of its entry
	lines [][]string
	code  int // the exit status; 0 means 1
}

// policyWith writes a copy of dir's rotation-policy.yaml with old
// replaced, and returns its path.
func policyWith(t *testing.T, dir, old, replacement string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "rotation-policy.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(data), old)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), old, replacement, 1)), 0o644))
	return path
}

// renderErrorCases are mistakes in what render reads: the policy, a
// source, a value, a missing policy.
func renderErrorCases() []errorCase {
	return []errorCase{
		{
			name: "render: two policy mistakes",
			setup: func(t *testing.T, dir string) ([]string, string) {
				p := policyWith(t, dir, "      maxPrevious: 1\n", "      maxPrevius: 1\n      protectIssuers: maybe\n")
				return []string{"render", ".", "--policy", p}, ""
			},
			lines: [][]string{
				{"error: RotationPolicy gateway-trust", "spec.trustBundles[0].retain.maxPrevius", "unknown field"},
				{"error: RotationPolicy gateway-trust", "spec.trustBundles[0].retain.protectIssuers", "true or false"},
			},
		},
		{
			name: "render: a source that is not in the input",
			setup: func(t *testing.T, dir string) ([]string, string) {
				p := policyWith(t, dir, "{name: envoy-gateway, namespace", "{name: gone, namespace")
				return []string{"render", ".", "--policy", p}, ""
			},
			lines: [][]string{{"error: RotationPolicy gateway-trust", "spec.trustBundles[0].sources[0]", "Secret envoy-gateway-system/gone is not in the input"}},
		},
		{
			name: "render: a broken source value",
			setup: func(t *testing.T, dir string) ([]string, string) {
				breakSourceCA(t, dir)
				return []string{"render", ".", "--policy", "rotation-policy.yaml"}, ""
			},
			lines: [][]string{{"error: Secret envoy-gateway-system/envoy-gateway data.ca.crt", "invalid base64", "(gateway-ca.yaml)"}},
		},
		{
			name: "render: a directory with no policy and no --policy",
			setup: func(t *testing.T, dir string) ([]string, string) {
				require.NoError(t, os.Remove(filepath.Join(dir, "rotation-policy.yaml")))
				return []string{"render", "."}, ""
			},
			lines: [][]string{{"rotate-certs render: no RotationPolicy (apiVersion rotate-certs.dev/v1alpha1) under .", "--policy FILE", "rotate-certs init . -o rotation-policy.yaml"}},
		},
	}
}

// commandErrorCases are command-line mistakes and bad input to init and
// function mode.
func commandErrorCases() []errorCase {
	return []errorCase{
		{
			name: "render: two directories",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"render", "a", "b", "--policy", "rotation-policy.yaml"}, ""
			},
			lines: [][]string{{"rotate-certs render: accepts 1 arg(s), received 2", "rotate-certs render --help"}},
			code:  2,
		},
		{
			name: "render: unknown flag",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"render", ".", "--polcy", "rotation-policy.yaml"}, ""
			},
			lines: [][]string{{"rotate-certs render: unknown flag: --polcy", "rotate-certs render --help"}},
			code:  2,
		},
		{
			name: "check: unknown flag",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"check", ".", "--fail-withn", "7d"}, ""
			},
			lines: [][]string{{"rotate-certs check: unknown flag: --fail-withn", "rotate-certs check --help"}},
			code:  2,
		},
		{
			name: "init: unknown flag",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"init", ".", "--nme", "x"}, ""
			},
			lines: [][]string{{"rotate-certs init: unknown flag: --nme", "rotate-certs init --help"}},
			code:  2,
		},
		{
			name: "snapshot: unknown flag",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"snapshot", "--out", "x"}, ""
			},
			lines: [][]string{{"rotate-certs snapshot: unknown flag: --out", "rotate-certs snapshot --help"}},
			code:  2,
		},
		{
			name: "init: a path that does not exist",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"init", "does-not-exist"}, ""
			},
			lines: [][]string{{"rotate-certs init:", "does-not-exist", "no such file or directory"}},
		},
		{
			name: "init: stdin that is not YAML",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return []string{"init", "-"}, "kind: [\n"
			},
			lines: [][]string{{"rotate-certs init: stdin", "yaml: line 1"}},
		},
		{
			name: "function mode: a policy mistake",
			setup: func(t *testing.T, dir string) ([]string, string) {
				return nil, `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    trustBundles:
    - name: gw
      sources: [{secret: {name: ca, namespace: ns}}]
      target: {name: trust, kind: Sekret}
items: []
`
			},
			lines: [][]string{{"error: RotationPolicy p", "spec.trustBundles[0].target.kind"}},
		},
	}
}
