package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// End-to-end tests of the pull-request gate: the composite GitHub Action
// (action.yml) whose diff step is run as GitHub runs it - its env expanded
// from the inputs examples/ci's pull-request workflow gives it, with GitHub's
// bash invocation - in real git repositories holding a base commit and a
// pull request, with the binary under test as rotate-certs and the GitHub
// API replaced by a stub (COMMENT_API) that serves a comment list and
// records each request.

// actionStep is a step of a composite action or of a workflow.
type actionStep struct {
	ID    string            `json:"id"`
	If    string            `json:"if"`
	Uses  string            `json:"uses"`
	Shell string            `json:"shell"`
	Run   string            `json:"run"`
	Env   map[string]string `json:"env"`
	With  map[string]any    `json:"with"`
}

// ghAction is the part of action.yml the tests rely on.
type ghAction struct {
	Inputs map[string]struct {
		Default string `json:"default"`
	} `json:"inputs"`
	Outputs map[string]struct {
		Value string `json:"value"`
	} `json:"outputs"`
	Runs struct {
		Using string       `json:"using"`
		Steps []actionStep `json:"steps"`
	} `json:"runs"`
}

func loadAction(t *testing.T) ghAction {
	t.Helper()
	var a ghAction
	yamlInto(t, golden.Path("action.yml"), &a)
	require.Equal(t, "composite", a.Runs.Using)
	return a
}

// yamlInto decodes the YAML file at path into v, through kyaml's JSON (so
// that a key "on" stays a string, as GitHub reads it).
func yamlInto(t *testing.T, path string, v any) {
	t.Helper()
	node, err := yaml.Parse(readFile(t, path))
	require.NoError(t, err, path)
	raw, err := node.MarshalJSON()
	require.NoError(t, err, path)
	require.NoError(t, json.Unmarshal(raw, v), path)
}

// step returns the step of the action with the given id.
func (a ghAction) step(t *testing.T, id string) actionStep {
	t.Helper()
	for _, s := range a.Runs.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("action.yml has no step %q", id)
	return actionStep{}
}

// prWorkflowWith returns the inputs examples/ci's pull-request workflow
// gives the action, after checking how the workflow runs it.
func prWorkflowWith(t *testing.T) map[string]string {
	t.Helper()
	var wf struct {
		On          map[string]any    `json:"on"`
		Permissions map[string]string `json:"permissions"`
		Jobs        map[string]struct {
			Steps []actionStep `json:"steps"`
		} `json:"jobs"`
	}
	yamlInto(t, filepath.Join(ciDir, ".github", "workflows", "pull-request.yaml"), &wf)
	require.Contains(t, wf.On, "pull_request")
	require.Equal(t, "write", wf.Permissions["pull-requests"], "the gate writes its comment")
	var with map[string]string
	for _, job := range wf.Jobs {
		for i, s := range job.Steps {
			if !strings.HasPrefix(s.Uses, "rotate-certs/rotate-certs@") {
				continue
			}
			require.NotZero(t, i, "the repository must be checked out first")
			require.Equal(t, "0", fmt.Sprint(job.Steps[i-1].With["fetch-depth"]), "the diff needs the history to find the merge base")
			with = map[string]string{}
			for k, v := range s.With {
				with[k] = fmt.Sprint(v)
			}
		}
	}
	require.NotNil(t, with, "the workflow does not use the action")
	return with
}

// expression matches a GitHub Actions expression.
var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// expand evaluates the expressions of s that name inputs (with's value,
// else the input's default, itself expanded) or ctx; any other fails the
// test, so that the action uses nothing the test does not give it.
func (a ghAction) expand(t *testing.T, s string, with, ctx map[string]string) string {
	t.Helper()
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		name := expression.FindStringSubmatch(m)[1]
		if in, ok := strings.CutPrefix(name, "inputs."); ok {
			def, declared := a.Inputs[in]
			require.True(t, declared, "action.yml uses undeclared input %s", in)
			if v, ok := with[in]; ok {
				return v
			}
			return a.expand(t, def.Default, with, ctx)
		}
		v, ok := ctx[name]
		require.True(t, ok, "the test gives no value for ${{ %s }}", name)
		return v
	})
}

// requireDiffCommand fails when the binary under test has no diff
// command: the gate is nothing without it.
func requireDiffCommand(t *testing.T) {
	t.Helper()
	stdout, stderr, code := runIn(t, t.TempDir(), "", "diff", "--help")
	if code != 0 || !strings.Contains(stdout, "rotate-certs diff") {
		t.Fatalf("rotate-certs has no diff command, which the pull-request gate runs (diff --help: exit %d)\n%s", code, stderr)
	}
}

// ghComment is a comment as GitHub's list of issue comments returns it.
type ghComment struct {
	ID   int    `json:"id"`
	Body string `json:"body"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
}

func comment(id int, login, body string) ghComment {
	c := ghComment{ID: id, Body: body}
	c.User.Login = login
	return c
}

// githubStub is the GitHub API the script talks to: it serves pages of
// comments from its directory and records every request.
const githubStub = `#!/usr/bin/env bash
set -eu
dir=$(dirname "$0")/../github
echo "$1 $2" >>"$dir/calls"
if [ -n "${3:-}" ]; then cp "$3" "$dir/request.json"; fi
case "$1" in
GET) cat "$dir/page-${2##*page=}.json" 2>/dev/null || echo '[]' ;;
POST | PATCH)
	if [ -e "$dir/read-only" ]; then echo '{"message": "Resource not accessible by integration"}'; exit 22; fi
	if [ "$1" = POST ]; then echo '{"id": 9001}'; else echo "{\"id\": ${2##*/}}"; fi ;;
*) exit 3 ;;
esac
`

// gateRepo is a git repository laid out like examples/ci whose main
// branch holds the example and whose branch pr holds a pull request.
type gateRepo struct {
	root, dir string
	env       []string
}

func newGateRepo(t *testing.T) gateRepo {
	t.Helper()
	return newGateRepoOf(t, func(t *testing.T, dir string) {
		require.NoError(t, os.CopyFS(dir, os.DirFS(ciDir)))
		beforeCertgen(t, dir)
	})
}

// newGateRepoOf is a gate repository whose main branch holds the tree
// fill writes into its directory.
func newGateRepoOf(t *testing.T, fill func(t *testing.T, dir string)) gateRepo {
	t.Helper()
	root := t.TempDir()
	r := gateRepo{root: root, dir: filepath.Join(root, "repo")}
	fill(t, r.dir)
	bin, env := scriptEnv(t, root)
	r.env = env
	require.NoError(t, os.WriteFile(filepath.Join(bin, "github-api"), []byte(githubStub), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "github"), 0o755))
	e2eharness.PinClock(t, r.dir, e2eharness.StagedNow)
	gitInit(t, r.dir, r.env)
	return r
}

// dataValue returns the value of the data key of the manifest at path.
func dataValue(t *testing.T, path, key string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(key) + `: (\S+)$`).FindStringSubmatch(readFile(t, path))
	require.NotNil(t, m, "%s has no data.%s", path, key)
	return m[1]
}

// beforeCertgen puts examples/ci's tree in dir back to before certgen
// rotated the CA: the CA Secret holds the old CA (the one the trust bundle
// holds) and a leaf of it (the rate-limit client's certificate).
func beforeCertgen(t *testing.T, dir string) {
	t.Helper()
	prod := filepath.Join(dir, "clusters", "prod")
	ca := filepath.Join(prod, "gateway-ca.yaml")
	editFile(t, ca, dataValue(t, ca, "ca.crt"), dataValue(t, filepath.Join(prod, "trust.yaml"), "ca.crt"))
	editFile(t, ca, dataValue(t, ca, "tls.crt"), dataValue(t, filepath.Join(prod, "ratelimit-client.yaml"), "tls.crt"))
	editFile(t, ca, "  tls.key: "+dataValue(t, ca, "tls.key")+"\n", "")
}

// commitOn commits edit's changes on branch (created from main when new).
func (r gateRepo) commitOn(t *testing.T, branch string, edit func(t *testing.T, dir string)) {
	t.Helper()
	if !strings.Contains(git(t, r.dir, r.env, "branch", "--list", branch), branch) {
		git(t, r.dir, r.env, "branch", "-q", branch, "main")
	}
	git(t, r.dir, r.env, "checkout", "-q", branch)
	edit(t, r.dir)
	gitCommitAll(t, r.dir, r.env, "a change on "+branch)
}

// serve makes the stub list these pages of comments.
func (r gateRepo) serve(t *testing.T, pages [][]ghComment) {
	t.Helper()
	for i, p := range pages {
		data, err := json.Marshal(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(r.root, "github", fmt.Sprintf("page-%d.json", i+1)), data, 0o644))
	}
}

// calls returns the requests the stub received, as "METHOD PATH".
func (r gateRepo) calls(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.root, "github", "calls"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// gateRun is what one run of the action's diff step left.
type gateRun struct {
	code    int
	stderr  string
	outputs map[string]string
	body    string // the body file
	summary string // the job summary
}

// prNumber and repository are the pull request the runs post to.
const (
	prNumber   = "7"
	repository = "example-org/gitops"
)

// runAction runs the action's diff step for the pull request from main to
// the branch pr, as GitHub runs it on a pull_request event: the branch's
// head checked out, the step's env expanded from with and GitHub's
// context, the action's own directory (this repository) as
// GITHUB_ACTION_PATH.
func (r gateRepo) runAction(t *testing.T, a ghAction, with map[string]string) gateRun {
	t.Helper()
	git(t, r.dir, r.env, "checkout", "-q", "pr")
	step := a.step(t, "diff")
	require.Equal(t, "bash", step.Shell)
	ctx := map[string]string{
		"github.event.pull_request.base.sha": strings.TrimSpace(git(t, r.dir, r.env, "rev-parse", "main")),
		"github.event.pull_request.number":   prNumber,
		"github.token":                       "not-a-token",
	}
	files := t.TempDir()
	out, summary := filepath.Join(files, "output"), filepath.Join(files, "summary")
	env := append(append([]string(nil), r.env...),
		"GITHUB_ACTION_PATH="+golden.Path(), "GITHUB_REPOSITORY="+repository, "GITHUB_OUTPUT="+out,
		"GITHUB_STEP_SUMMARY="+summary, "RUNNER_TEMP="+files, "GITHUB_SERVER_URL=https://github.com", "GITHUB_RUN_ID=42",
		"COMMENT_API="+filepath.Join(r.root, "bin", "github-api"))
	for k, v := range step.Env {
		env = append(env, k+"="+a.expand(t, v, with, ctx))
	}
	script := filepath.Join(files, "step.sh")
	require.NoError(t, os.WriteFile(script, []byte(step.Run), 0o644))
	res := e2eharness.Cmd{Dir: r.dir, Env: env}.Run(t, "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	run := gateRun{code: res.Code, stderr: res.Stdout + res.Stderr, outputs: map[string]string{}}
	if b, err := os.ReadFile(out); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				run.outputs[k] = v
			}
		}
	}
	if f := run.outputs["body-file"]; f != "" {
		run.body = readFile(t, f)
		run.summary = readFile(t, summary)
	}
	return run
}

// diffMarkdown is what rotate-certs diff prints as Markdown for the pull
// request's merge base and head, run by hand.
func (r gateRepo) diffMarkdown(t *testing.T, args ...string) string {
	t.Helper()
	base := strings.TrimSpace(git(t, r.dir, r.env, "merge-base", "main", "pr"))
	head := strings.TrimSpace(git(t, r.dir, r.env, "rev-parse", "pr"))
	res := e2eharness.Cmd{Dir: r.dir, Env: r.env}.Run(t, binary, append([]string{"diff", base, head, "clusters", "-o", "markdown"}, args...)...)
	require.LessOrEqual(t, res.Code, 1, res.Stderr)
	return res.Stdout
}

// The pull requests of the tests, each an edit of examples/ci's tree.

// renderPR is certgen's rotation of the CA (examples/ci's CA Secret) with
// CI's render of clusters/prod: the new CA joins the bundle, the old one
// stays.
func renderPR(t *testing.T, dir string) {
	t.Helper()
	ca := filepath.Join("clusters", "prod", "gateway-ca.yaml")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ca), []byte(readFile(t, filepath.Join(ciDir, ca))), 0o644))
	_, stderr, code := runIn(t, dir, "", "render", "clusters/prod", "--policy", "clusters/prod/rotation-policy.yaml")
	require.Zero(t, code, stderr)
}

// plantPR pastes a CA that no source holds into the trust bundle's data.
func plantPR(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "clusters", "prod", "trust.yaml")
	bundle := dataValue(t, path, "ca.crt")
	pem, err := base64.StdEncoding.DecodeString(bundle)
	require.NoError(t, err)
	editFile(t, path, bundle, base64.StdEncoding.EncodeToString(append(pem, testpki.Fixture("attacker-ca").PEM()...)))
}

// brokenPR adds a file that is not valid YAML.
func brokenPR(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "clusters", "prod", "broken.yaml")
	require.NoError(t, os.WriteFile(path, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: x\n"), 0o644))
}

// labelPR changes the trust bundle's labels and nothing it trusts.
func labelPR(t *testing.T, dir string) {
	t.Helper()
	editFile(t, filepath.Join(dir, "clusters", "prod", "trust.yaml"), "  labels:\n", "  labels:\n    team: platform\n")
}

// gateMarker is the first line of the gate's comment (comment-key default).
const gateMarker = "<!-- rotate-certs diff: default -->"

// A gateCase is a pull request, the comments it already has and what the
// action must do with it.
type gateCase struct {
	name     string
	pr       func(*testing.T, string) // the pull request's commit
	onMain   func(*testing.T, string) // a commit on main after the branch: the base moves on
	with     map[string]string        // inputs beside the example workflow's
	pages    [][]ghComment            // the pull request's comments, by page
	readOnly bool                     // the token cannot write (a pull request from a fork)
	code     int                      // the step's exit status; -1: diff failed, any non-zero status
	outputs  map[string]string        // some of the step's outputs
	calls    []string                 // the requests, without the repository's prefix
}

// gateNow is the clock of the runs: the one the repositories' policies pin.
var gateNow = e2eharness.StagedNow.Format(time.RFC3339)

const listComments = "GET issues/7/comments?per_page=100&page="

// others are 100 comments that are not the gate's: a page of them.
func others() []ghComment {
	out := make([]ghComment, 100)
	for i := range out {
		out[i] = comment(100+i, "reviewer", fmt.Sprintf("looks good %d", i))
	}
	return out
}

func gateCases() []gateCase {
	own := comment(555, "github-actions[bot]", gateMarker+"\r\nthe report of an earlier push")
	return []gateCase{
		{name: "a render, first comment", pr: renderPR, code: 0,
			outputs: map[string]string{"added": "2", "removed": "1", "breaks": "0", "planted": "0", "comment-action": "created", "comment-id": "9001"},
			calls:   []string{listComments + "1", "POST issues/7/comments"}},
		{name: "a planted CA updates the gate's own comment", pr: plantPR, code: 1,
			pages: [][]ghComment{{comment(1, "reviewer", "> "+gateMarker+"\n> quoted"),
				comment(2, "mallory", gateMarker+"\nnot the bot's"), own}},
			outputs: map[string]string{"planted": "1", "breaks": "0", "comment-action": "updated", "comment-id": "555"},
			calls:   []string{listComments + "1", "PATCH issues/comments/555"}},
		{name: "a planted CA with --allow-unexplained", pr: plantPR, code: 0,
			with:    map[string]string{"args": "--now " + gateNow + " --allow-unexplained"},
			outputs: map[string]string{"exit-code": "0", "planted": "1", "comment-action": "created"},
			calls:   []string{listComments + "1", "POST issues/7/comments"}},
		{name: "no trust change while main moved on: no comment", pr: labelPR, onMain: renderPR, code: 0,
			outputs: map[string]string{"added": "0", "removed": "0", "comment-action": "none"},
			calls:   []string{listComments + "1"}},
		{name: "no trust change updates the comment on page 2", pr: labelPR, code: 0,
			pages:   [][]ghComment{others(), {comment(777, "github-actions[bot]", gateMarker+"\nan earlier break")}},
			outputs: map[string]string{"comment-action": "updated", "comment-id": "777"},
			calls:   []string{listComments + "1", listComments + "2", "PATCH issues/comments/777"}},
		{name: "comment never", pr: plantPR, code: 1, with: map[string]string{"comment": "never"},
			outputs: map[string]string{"planted": "1", "comment-action": "none"}},
		{name: "a manifest diff cannot read: the comment says so", pr: brokenPR, code: -1,
			pages:   [][]ghComment{{own}},
			outputs: map[string]string{"comment-action": "updated", "comment-id": "555"},
			calls:   []string{listComments + "1", "PATCH issues/comments/555"}},
		{name: "a typo in paths fails closed: the comment says diff failed", pr: plantPR, code: -1,
			with:    map[string]string{"paths": "clusterz"},
			pages:   [][]ghComment{{own}},
			outputs: map[string]string{"comment-action": "updated", "comment-id": "555"},
			calls:   []string{listComments + "1", "PATCH issues/comments/555"}},
		{name: "a read-only token warns", pr: plantPR, code: 1, readOnly: true,
			outputs: map[string]string{"comment-action": "none"},
			calls:   []string{listComments + "1", "POST issues/7/comments"}},
	}
}

func TestPullRequestGate(t *testing.T) {
	requireDiffCommand(t)
	e2eharness.Tool(t, "jq")
	a := loadAction(t)
	for _, tc := range gateCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := newGateRepo(t)
			r.commitOn(t, "pr", tc.pr)
			if tc.onMain != nil {
				r.commitOn(t, "main", tc.onMain)
			}
			r.serve(t, tc.pages)
			if tc.readOnly {
				require.NoError(t, os.WriteFile(filepath.Join(r.root, "github", "read-only"), nil, 0o644))
			}
			with := prWorkflowWith(t)
			with["args"] = "--now " + gateNow
			for k, v := range tc.with {
				with[k] = v
			}
			run := r.runAction(t, a, with)
			if tc.code < 0 {
				require.NotZero(t, run.code, run.stderr)
				require.Contains(t, run.body, gateMarker+"\n**rotate-certs diff failed** (exit "+run.outputs["exit-code"]+")")
				require.Equal(t, run.body, run.summary)
				return
			}
			require.Equal(t, tc.code, run.code, run.stderr)
			require.Equal(t, fmt.Sprint(tc.code), run.outputs["exit-code"])
			for k, v := range tc.outputs {
				require.Equal(t, v, run.outputs[k], "output %s:\n%s", k, run.stderr)
			}
			var calls []string
			for _, c := range r.calls(t) {
				calls = append(calls, strings.Replace(c, " /repos/"+repository+"/", " ", 1))
			}
			require.Equal(t, tc.calls, calls)
			verdict := map[int]string{0: "PASS", 1: "FAIL"}[tc.code]
			require.True(t, strings.HasPrefix(run.body, gateMarker+"\n### rotate-certs diff: "+verdict), "the verdict comes first:\n%s", run.body)
			r.checkBody(t, run, strings.Fields(with["args"]))
		})
	}
}

// checkBody checks the comment body of a run: the marker, diff's own
// Markdown whole, the command that shows it and the run; the job summary
// and the request the stub received (if any) carry the same body; no key
// material.
func (r gateRepo) checkBody(t *testing.T, run gateRun, args []string) {
	t.Helper()
	require.True(t, strings.HasPrefix(run.body, gateMarker+"\n"), run.body)
	require.Contains(t, run.body, r.diffMarkdown(t, args...))
	base := strings.TrimSpace(git(t, r.dir, r.env, "rev-parse", "--short", "main"))
	if mb := strings.TrimSpace(git(t, r.dir, r.env, "merge-base", "main", "pr")); !strings.HasPrefix(mb, base) {
		base = strings.TrimSpace(git(t, r.dir, r.env, "rev-parse", "--short", mb))
	}
	head := strings.TrimSpace(git(t, r.dir, r.env, "rev-parse", "--short", "pr"))
	require.Contains(t, run.body, "`rotate-certs diff "+base+" "+head+" clusters`")
	require.Contains(t, run.body, "(https://github.com/"+repository+"/actions/runs/42)")
	require.NotContains(t, run.body, "PRIVATE KEY")
	require.Equal(t, run.body, run.summary)
	if req, err := os.ReadFile(filepath.Join(r.root, "github", "request.json")); err == nil {
		var sent struct{ Body string }
		require.NoError(t, json.Unmarshal(req, &sent))
		require.Equal(t, run.body, sent.Body)
	}
}

func TestPullRequestGateUsage(t *testing.T) {
	e2eharness.Tool(t, "jq")
	a := loadAction(t)
	r := newGateRepo(t)
	r.commitOn(t, "pr", labelPR)
	for _, tc := range []struct {
		name, want string
		with       map[string]string
	}{
		{"a base this clone does not have", "fetch-depth: 0", map[string]string{"base": strings.Repeat("0", 40)}},
		{"no base (not a pull_request event)", "DIFF_BASE", map[string]string{"base": ""}},
		{"an unknown comment mode", "COMMENT must be", map[string]string{"comment": "sometimes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := r.runAction(t, a, tc.with)
			require.Equal(t, 2, run.code, run.stderr)
			require.Contains(t, run.stderr, tc.want)
			require.Empty(t, r.calls(t), "nothing may be posted")
		})
	}
}

// preCommitHook is a hook of .pre-commit-hooks.yaml.
type preCommitHook struct {
	ID            string `json:"id"`
	Entry         string `json:"entry"`
	Language      string `json:"language"`
	PassFilenames *bool  `json:"pass_filenames"`
	Files         string `json:"files"`
}

func TestPreCommitHooksShape(t *testing.T) {
	var hooks []preCommitHook
	yamlInto(t, golden.Path(".pre-commit-hooks.yaml"), &hooks)
	languages := map[string]string{}
	for _, h := range hooks {
		require.Equal(t, "rotate-certs diff --pre-commit", h.Entry, h.ID)
		require.NotNil(t, h.PassFilenames, h.ID)
		require.False(t, *h.PassFilenames, "%s: diff compares whole trees, not the files pre-commit names", h.ID)
		files := regexp.MustCompile(h.Files)
		for path, want := range map[string]bool{"clusters/prod/trust.yaml": true, "chart/values.yml": true, "list.json": true,
			".krmignore": true, "clusters/.krmignore": true, "README.md": false, "main.go": false, "x.yaml.orig": false,
			"istio/cluster1/root-cert.pem": true, "certs/ca.crt": true, "ca.cer": true, "istio/cluster1/ca-key.pem": true, "tls.key": true,
			"base/Kustomization": true, "config/app.env": true, "key.pem.bak": false} {
			require.Equal(t, want, files.MatchString(path), "%s: files %q on %s", h.ID, h.Files, path)
		}
		languages[h.ID] = h.Language
	}
	require.Equal(t, map[string]string{"rotate-certs-diff": "golang", "rotate-certs-diff-system": "system"}, languages)
}

// TestPreCommitHook runs the hook that uses rotate-certs on PATH with
// pre-commit itself (try-repo on this repository): it judges what is
// staged - pre-commit sets aside what is not - and fails a planted CA.
func TestPreCommitHook(t *testing.T) {
	requireDiffCommand(t)
	preCommit := e2eharness.Tool(t, "pre-commit")
	for _, tc := range []struct {
		name             string
		staged, unstaged func(*testing.T, string)
		code             int
		want             string
	}{
		{"a planted CA staged, undone in the work tree", plantPR, undoTrust, 1, "CN=attacker-ca"},
		{"a label staged, a planted CA not", labelPR, plantPR, 0, "PASS: no change to trust"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newGateRepo(t)
			tc.staged(t, r.dir)
			git(t, r.dir, r.env, "add", "-A")
			tc.unstaged(t, r.dir)
			unstaged := git(t, r.dir, r.env, "diff")
			require.NotEmpty(t, unstaged)
			res := e2eharness.Cmd{Dir: r.dir, Env: append(r.env, "PRE_COMMIT_HOME="+t.TempDir())}.Run(t,
				preCommit, "try-repo", golden.Path(), "rotate-certs-diff-system", "--verbose")
			require.Equal(t, tc.code, res.Code, res.Stdout+res.Stderr)
			require.Contains(t, res.Stdout, tc.want)
			require.Equal(t, unstaged, git(t, r.dir, r.env, "diff"), "pre-commit must give the unstaged change back")
		})
	}
}

// undoTrust puts the committed trust bundle back in the work tree.
func undoTrust(t *testing.T, dir string) {
	t.Helper()
	git(t, dir, nil, "restore", "--source=HEAD", "--worktree", "--", "clusters/prod/trust.yaml")
}

// TestGolangHookInstallsRotateCertsAlone runs what pre-commit's golang
// language runs in a clone of this repository to install a hook - `go
// install ./...` at its top, with no flags of ours - and checks that it
// builds rotate-certs and nothing else: the programs of bench/, hack/ and
// internal/ need the devtools tag (and testify, some of them).
func TestGolangHookInstallsRotateCertsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module (-short)")
	}
	gobin := t.TempDir()
	env := append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=", "CGO_ENABLED=0")
	r := e2eharness.Cmd{Dir: golden.Path("."), Env: env}.Run(t, "go", "install", "./...")
	require.Zero(t, r.Code, r.Stderr)
	entries, err := os.ReadDir(gobin)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"rotate-certs"}, names)
}
