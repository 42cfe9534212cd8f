package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var binary string // the rotate-certs binary built for this test run

func TestMain(m *testing.M) { os.Exit(e2eharness.Main(m, &binary)) }

// examplesDir is the repository's examples/.
var examplesDir = golden.Path("examples")

// checkNow is the clock the tests that pin one pass as --now.
const checkNow = "2026-11-22T00:00:00Z"

// stageExample copies examples/<name> beside the binary under test
// (e2eharness.StageExample) and returns the copy.
func stageExample(t *testing.T, name string) string {
	t.Helper()
	return e2eharness.StageExample(t, binary, name)
}

// run runs name with args in dir; err is nil or the failed exit.
func run(t *testing.T, dir string, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	r := e2eharness.Cmd{Dir: dir}.Run(t, name, args...)
	return r.Stdout, r.Stderr, r.Err
}

// runIn runs the binary under test with args in dir, stdin on its
// standard input, and returns its output and exit status.
func runIn(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	r := e2eharness.Cmd{Dir: dir, Stdin: stdin}.Run(t, binary, args...)
	return r.Stdout, r.Stderr, r.Code
}

// git runs git in dir with env (nil: the test's own) and returns its
// output; the test fails when git does.
func git(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	r := e2eharness.Cmd{Dir: dir, Env: env}.Run(t, "git", args...)
	require.NoError(t, r.Err, "git %v: %s%s", args, r.Stdout, r.Stderr)
	return r.Stdout + r.Stderr
}

// gitCommitAll commits every file under dir.
func gitCommitAll(t *testing.T, dir string, env []string, msg string) {
	t.Helper()
	git(t, dir, env, "add", "-A")
	git(t, dir, env, "-c", "user.email=e2e@rotate-certs.dev", "-c", "user.name=e2e", "commit", "-qm", msg, "--allow-empty")
}

// gitInit makes dir a git repository, branch main, whose first commit
// holds every file.
func gitInit(t *testing.T, dir string, env []string) {
	t.Helper()
	git(t, dir, env, "init", "-q", "-b", "main", ".")
	gitCommitAll(t, dir, env, "before")
}

// scriptEnv makes root/bin, holding the binary under test as rotate-certs,
// and root/home. It returns bin and the environment a CI runner gives a
// script: PATH with bin first, that HOME, no system git configuration, and
// extra.
func scriptEnv(t *testing.T, root string, extra ...string) (bin string, env []string) {
	t.Helper()
	bin, home := filepath.Join(root, "bin"), filepath.Join(root, "home")
	for _, d := range []string{bin, home} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.Symlink(binary, filepath.Join(bin, "rotate-certs")))
	env = append([]string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}, extra...)
	return bin, env
}

// parseStream reads a multi-document YAML stream.
func parseStream(t *testing.T, s string) []*yaml.RNode {
	t.Helper()
	return e2eharness.ParseStream(t, s)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// caSecret is a Secret manifest whose data.ca.crt holds the certificate of
// a testpki fixture.
func caSecret(name, namespace, fixture string) string {
	return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n  namespace: " + namespace + "\ndata:\n  ca.crt: " +
		base64.StdEncoding.EncodeToString(testpki.Fixture(fixture).PEM()) + "\n"
}

// kustomizeBuild builds dir with `kustomize build --enable-alpha-plugins
// --enable-exec` twice: both builds succeed and print the same bytes. It
// returns the output and stderr of the first.
func kustomizeBuild(t *testing.T, kustomize, dir string) (out, stderr string) {
	t.Helper()
	out, stderr, err := run(t, dir, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
	require.NoError(t, err, stderr)
	again, _, err := run(t, dir, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
	require.NoError(t, err)
	require.Equal(t, out, again, "two builds must be byte-identical")
	return out, stderr
}

// kptRender makes dir a git repository (gitInit), so that the test can ask
// git what changed, and renders it in place with `kpt fn render
// --allow-exec`, which must succeed.
func kptRender(t *testing.T, kpt, dir string) {
	t.Helper()
	gitInit(t, dir, nil)
	_, stderr, err := run(t, dir, kpt, "fn", "render", "--allow-exec", "--truncate-output=false")
	require.NoError(t, err, stderr)
}

// writeFiles writes files (by slash path below dir).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(text), 0o644))
	}
}

// editFile replaces the first old in the file at path with new; the file
// must hold old.
func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	text := readFile(t, path)
	require.Contains(t, text, old, path)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(text, old, new, 1)), 0o644))
}

// breakSourceCA makes ca.crt of the CA Secret in dir/gateway-ca.yaml (the
// envoy-gateway example's) invalid base64, its value moved to old.crt: a
// source every render refuses.
func breakSourceCA(t *testing.T, dir string) {
	t.Helper()
	editFile(t, filepath.Join(dir, "gateway-ca.yaml"), "  ca.crt: ", "  ca.crt: '!!notbase64'\n  old.crt: ")
}
