package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// End-to-end tests of examples/ci: the GitHub Actions workflow's render
// step, run exactly as written (with the shell GitHub uses for `shell:
// bash`), in a temporary git repository laid out like the example, with
// the rotate-certs binary under test on the PATH.

var ciDir = filepath.Join(examplesDir, "ci")

// workflow is the part of the GitHub Actions workflow the tests rely on.
type workflow struct {
	On struct {
		Push *struct {
			Branches []string `json:"branches"`
			Paths    []string `json:"paths"`
		} `json:"push"`
		Schedule []struct {
			Cron string `json:"cron"`
		} `json:"schedule"`
	} `json:"on"`
	Permissions map[string]string `json:"permissions"`
	Jobs        map[string]struct {
		Steps []struct {
			ID    string `json:"id"`
			Name  string `json:"name"`
			If    string `json:"if"`
			Shell string `json:"shell"`
			Run   string `json:"run"`
		} `json:"steps"`
	} `json:"jobs"`
}

func loadWorkflow(t *testing.T) workflow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ciDir, ".github", "workflows", "rotate-certs.yaml"))
	require.NoError(t, err)
	node, err := yaml.Parse(string(data))
	require.NoError(t, err)
	raw, err := node.MarshalJSON()
	require.NoError(t, err)
	var wf workflow
	require.NoError(t, json.Unmarshal(raw, &wf))
	return wf
}

// renderStep returns the run script of the step with id "render", and
// checks that a later step pushes only when it committed.
func renderStep(t *testing.T, wf workflow) string {
	t.Helper()
	var run string
	pushes := false
	for _, job := range wf.Jobs {
		for _, s := range job.Steps {
			if s.ID == "render" {
				require.Equal(t, "bash", s.Shell, "the test runs the step with GitHub's bash invocation")
				run = s.Run
			}
			if run != "" && strings.Contains(s.Run, "git push") {
				require.Equal(t, "steps.render.outputs.committed == 'true'", s.If, "push only after a commit")
				pushes = true
			}
		}
	}
	require.NotEmpty(t, run, "no step with id render")
	require.True(t, pushes, "no step pushes the commit")
	return run
}

// ciRepo is a temporary git repository laid out like examples/ci, whose
// history starts with one commit of the example.
type ciRepo struct {
	dir, output string
	env         []string
}

func newCIRepo(t *testing.T) ciRepo {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "repo")
	require.NoError(t, os.CopyFS(dir, os.DirFS(ciDir)))
	e2eharness.PinClock(t, dir, e2eharness.StagedNow)
	r := ciRepo{dir: dir, output: filepath.Join(root, "github-output")}
	// What a GitHub-hosted runner provides, minus the network: git, bash,
	// coreutils and rotate-certs (the workflow's go install) on the PATH.
	_, r.env = scriptEnv(t, root, "GITHUB_OUTPUT="+r.output, "GITHUB_REF_NAME=main")
	gitInit(t, dir, r.env)
	return r
}

func (r ciRepo) git(t *testing.T, args ...string) string {
	t.Helper()
	return git(t, r.dir, r.env, args...)
}

func (r ciRepo) commit(t *testing.T, msg string) {
	t.Helper()
	r.git(t, "-c", "user.name=test", "-c", "user.email=test@rotate-certs.dev", "commit", "-qam", msg)
}

func (r ciRepo) commits(t *testing.T) int {
	t.Helper()
	return len(strings.Fields(r.git(t, "rev-list", "HEAD")))
}

// runStep runs a workflow step's script as GitHub runs `shell: bash`:
// bash --noprofile --norc -eo pipefail {0}.
func (r ciRepo) runStep(t *testing.T, script string) (stderr string, code int) {
	t.Helper()
	require.NoError(t, os.WriteFile(r.output, nil, 0o644))
	f := filepath.Join(t.TempDir(), "step.sh")
	require.NoError(t, os.WriteFile(f, []byte(script), 0o644))
	res := e2eharness.Cmd{Dir: r.dir, Env: r.env}.Run(t, "bash", "--noprofile", "--norc", "-eo", "pipefail", f)
	return res.Stdout + res.Stderr, res.Code
}

func (r ciRepo) stepOutput(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(r.output)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

func TestCIWorkflowShape(t *testing.T) {
	wf := loadWorkflow(t)
	require.NotEmpty(t, wf.On.Schedule, "the workflow must also run on a schedule: time alone changes a render")
	require.NotNil(t, wf.On.Push, "the workflow must run on push")
	require.Equal(t, "write", wf.Permissions["contents"], "the job pushes its commit")
	run := renderStep(t, wf)
	require.Contains(t, run, "./render-and-commit.sh ")
	info, err := os.Stat(filepath.Join(ciDir, "render-and-commit.sh"))
	require.NoError(t, err)
	require.NotZero(t, info.Mode()&0o111, "render-and-commit.sh must be executable")
}

func TestCIRenderAndCommit(t *testing.T) {
	run := renderStep(t, loadWorkflow(t))
	r := newCIRepo(t)
	target := kube.Key{Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust"}
	before := r.commits(t)

	stderr, code := r.runStep(t, run)
	require.Zero(t, code, stderr)
	require.Equal(t, before+1, r.commits(t), "the first run must commit the render")
	require.Equal(t, "committed=true", r.stepOutput(t))
	require.Empty(t, r.git(t, "status", "--porcelain"), "the render must be committed whole")
	require.Equal(t, []string{"example-ca-new", "example-ca-old"},
		bundleSubjects(t, readPackage(t, filepath.Join(r.dir, "clusters", "prod")), target, "ca.crt"))
	require.Equal(t, "github-actions[bot]", strings.TrimSpace(r.git(t, "log", "-1", "--format=%an")))
	msg := r.git(t, "log", "-1", "--format=%B")
	require.True(t, strings.HasPrefix(msg, "rotate-certs: render clusters/prod (1 file(s) changed)\n"), msg)
	require.Contains(t, msg, "- modified: clusters/prod/trust.yaml", "the message must list the changed files")
	changed := strings.Fields(r.git(t, "show", "--name-only", "--format=", "HEAD"))
	require.Equal(t, []string{"clusters/prod/trust.yaml"}, changed)

	// The second run finds nothing to do: no commit, success.
	stderr, code = r.runStep(t, run)
	require.Zero(t, code, stderr)
	require.Equal(t, before+1, r.commits(t), "a second run must not commit")
	require.Equal(t, "committed=false", r.stepOutput(t))
	require.Contains(t, stderr, "nothing to commit")
}

func TestCIRenderAndCommitNewTarget(t *testing.T) {
	run := renderStep(t, loadWorkflow(t))
	r := newCIRepo(t)
	// Without the committed trust bundle the render creates it in a new
	// file, which the commit must include.
	r.git(t, "rm", "-q", "clusters/prod/trust.yaml")
	r.commit(t, "no trust bundle yet")
	before := r.commits(t)
	stderr, code := r.runStep(t, run)
	require.Zero(t, code, stderr)
	require.Equal(t, before+1, r.commits(t))
	require.Empty(t, r.git(t, "status", "--porcelain"))
	msg := r.git(t, "log", "-1", "--format=%B")
	require.Contains(t, msg, "- added:    clusters/prod/")
}

func TestCIRenderAndCommitFailures(t *testing.T) {
	run := renderStep(t, loadWorkflow(t))

	t.Run("failing render", func(t *testing.T) {
		r := newCIRepo(t)
		breakSourceCA(t, filepath.Join(r.dir, "clusters", "prod"))
		r.commit(t, "a broken source")
		before := r.commits(t)

		stderr, code := r.runStep(t, run)
		require.Equal(t, 1, code, "a failing render must fail the step:\n%s", stderr)
		require.Equal(t, before, r.commits(t), "nothing may be committed")
		require.Empty(t, r.git(t, "status", "--porcelain"), "a failed render writes nothing")
		require.Contains(t, stderr, "Secret envoy-gateway-system/envoy-gateway data.ca.crt")
		require.NotContains(t, r.stepOutput(t), "committed=true")
	})

	t.Run("uncommitted changes", func(t *testing.T) {
		r := newCIRepo(t)
		f := filepath.Join(r.dir, "clusters", "prod", "notes.yaml")
		require.NoError(t, os.WriteFile(f, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes, namespace: x}\n"), 0o644))
		before := r.commits(t)
		stderr, code := r.runStep(t, run)
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, "uncommitted changes")
		require.Equal(t, before, r.commits(t))
	})

	t.Run("usage", func(t *testing.T) {
		r := newCIRepo(t)
		stderr, code := r.runStep(t, "./render-and-commit.sh clusters/prod\n")
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, "usage:")
	})
}
