// Package e2eharness is what the end-to-end test packages (test/e2e and
// test/cluster) share: the rotate-certs binary built once per test binary,
// the one finder of the external programs the tests drive (skipping with
// how to get a missing one), copies of the examples staged beside the
// binary, running a command for its output and exit status, a directory's
// files as a snapshot, and the Dockerfile read as instructions.
package e2eharness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/golden"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Main is a test package's TestMain: it builds the binary (Build, stripped)
// into a temporary directory, stores its path in *binary, runs the tests
// and removes the build. It returns the exit status for os.Exit.
func Main(m *testing.M, binary *string) int {
	dir, err := os.MkdirTemp("", "rotate-certs-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *binary, err = Build(dir, "-s -w"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// Build compiles ./cmd/rotate-certs into dir/rotate-certs as the Dockerfile
// does - static (CGO_ENABLED=0), -trimpath, -buildvcs=false - with ldflags,
// and returns its path.
func Build(dir, ldflags string) (string, error) {
	root, err := golden.Root()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "rotate-certs")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./cmd/rotate-certs")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building rotate-certs: %v\n%s", err, out)
	}
	return bin, nil
}

// Tool returns the path of an external program a test drives: the
// repository's bin/<name> (where `make tools` puts the pinned kustomize and
// Helm), else name on PATH or in /usr/sbin. Without it the test skips,
// saying how to get it.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, ok := findTool(name)
	if !ok {
		t.Skipf("skipping: %s is not installed: %s", name, howToGet(name))
	}
	return p
}

// findTool looks for name where Tool does.
func findTool(name string) (string, bool) {
	candidates := []string{golden.Path("bin", name)}
	if p, err := exec.LookPath(name); err == nil {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, filepath.Join("/usr/sbin", name))
	for _, p := range candidates {
		if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// howToGet says where a program the tests drive comes from.
func howToGet(name string) string {
	switch name {
	case "kustomize":
		return "run `make tools` (installs the pinned kustomize into bin/)"
	case "helm":
		return "run `make tools` (installs the pinned Helm 3 into bin/)"
	case "helm4":
		return "run `make tools` (installs the pinned Helm 4 into bin/helm4)"
	case "kpt":
		return "no make target installs kpt; the kpt tests need it on PATH (/usr/bin/kpt on CI)"
	case "podman", "runc":
		return "`make container-tools` (part of `make tools`) installs podman and runc from Debian when run as root"
	case "registry":
		return "run `make registry` (installs go-containerregistry's loopback registry into bin/)"
	case "goreleaser", "ko", "cosign":
		return "run `make " + name + "` (part of `make tools`: the pinned " + name + " into bin/)"
	case "jq", "pre-commit":
		return "`make test-tools` installs Debian's " + name + " package when run as root"
	case "keytool":
		return "`make test-tools` installs Debian's headless JRE (default-jre-headless) when run as root"
	case "prlimit":
		return "it is part of util-linux; without it no file-size limit can be set for one process"
	}
	return "install it and run the test again"
}

// StageExample copies examples/<name> to <tmp>/examples/<name> beside a
// copy of binary at <tmp>/bin/rotate-certs, so that the examples' relative
// exec path (../../bin/rotate-certs) runs the binary under test. It returns
// the example's copy.
//
// The copy's policies that read the wall clock get spec.now set to
// StagedNow: the examples render a rotation, and a previous CA with no
// retirement record retires at the render's now, so two renders that the
// clock ticks between would record two times. A test that compares two
// renders - of one copy, or of two copies - compares them at one now, as a
// user's two renders of one commit at one moment would.
func StageExample(t testing.TB, binary, name string) string {
	t.Helper()
	root := t.TempDir()
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "rotate-certs"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(root, "examples", name)
	if err := os.CopyFS(dst, os.DirFS(golden.Path("examples", name))); err != nil {
		t.Fatal(err)
	}
	PinClock(t, dst, StagedNow)
	return dst
}

// retiredEntry matches one entry of a rotate-certs.dev/retired record.
var retiredEntry = regexp.MustCompile(`\b([0-9a-f]{64}) [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z`)

// WithoutRetiredTimes blanks the times of the retirement records in s
// (YAML or JSON): what two renders of a rotation that git does not record
// may differ in, since each is the render that sees the CA leave.
func WithoutRetiredTimes(s string) string { return retiredEntry.ReplaceAllString(s, "$1 <retired>") }

// StagedNow is the clock StageExample pins: the start of the test binary,
// to the second.
var StagedNow = time.Now().UTC().Truncate(time.Second)

// PinClock sets spec.now to now in every RotationPolicy file under dir
// that has none (a line "spec:" at the start of the file's policy gets a
// "  now:" line after it; the rest of the file is kept as written).
func PinClock(t testing.TB, dir string, now time.Time) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(data)
		if !strings.Contains(text, "kind: RotationPolicy") || strings.Contains(text, "\n  now:") || !strings.Contains(text, "\nspec:\n") {
			return nil
		}
		text = strings.Replace(text, "\nspec:\n", fmt.Sprintf("\nspec:\n  now: %q\n", now.Format(time.RFC3339)), 1)
		return os.WriteFile(path, []byte(text), d.Type().Perm()|0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Cmd is where and how a command runs.
type Cmd struct {
	Dir   string
	Env   []string // the whole environment; nil is the test's own
	Stdin string
	// Ctx, when set, kills the command when it is done (a guard against a
	// hang, never a speed assertion).
	Ctx context.Context
}

// Result is what a command printed and how it ended.
type Result struct {
	Stdout, Stderr string
	Code           int   // the exit status
	Err            error // nil, or the *exec.ExitError of a failed command
}

// Run runs name with args. A command that cannot be started fails the
// test: that is no exit status.
func (c Cmd) Run(t testing.TB, name string, args ...string) Result {
	t.Helper()
	ctx := c.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdin = strings.NewReader(c.Stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s: %v", name, err)
	}
	return Result{Stdout: o.String(), Stderr: e.String(), Code: cmd.ProcessState.ExitCode(), Err: err}
}

// ParseStream reads a multi-document YAML stream, without the reader's
// annotations.
func ParseStream(t testing.TB, s string) []*yaml.RNode {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(s), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// Files returns the content of every regular file under dir by its path
// relative to dir, .git excluded: a snapshot to compare before and after a
// command.
func Files(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
