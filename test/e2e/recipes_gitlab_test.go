package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/stretchr/testify/require"
)

// The GitLab CI recipe of docs/guides/pull-requests.md on a repository
// with generator inputs (recipes_test.go has the repository): the job's
// script lines are taken from the guide - the job, and the note that
// keeps one comment on the merge request, added before its last line as
// the guide says - and run as GitLab's runner runs a job's script with
// bash (one shell, `set -eo pipefail`), with the variables GitLab sets for
// a merge request pipeline, the source branch's head checked out detached.
// `go install` is a stand-in that installs the binary under test when
// asked for this module's command; the GitLab API is a stand-in curl that
// records each request.

// gitlabJob is the part of a GitLab CI job the test relies on.
type gitlabJob struct {
	Image string `json:"image"`
	Rules []struct {
		If string `json:"if"`
	} `json:"rules"`
	Variables map[string]string `json:"variables"`
	Script    []string          `json:"script"`
	Artifacts struct {
		When  string   `json:"when"`
		Paths []string `json:"paths"`
	} `json:"artifacts"`
}

// yamlBlock matches a fenced YAML block of a Markdown file.
var yamlBlock = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```$")

// gitlabRecipe reads the guide's GitLab CI section: the job
// rotate-certs-diff and the script lines that keep a note, placed before
// the job's `exit "$status"`.
func gitlabRecipe(t *testing.T) gitlabJob {
	t.Helper()
	guide := readFile(t, golden.Path("docs", "guides", "pull-requests.md"))
	_, section, ok := strings.Cut(guide, "\n## GitLab CI\n")
	require.True(t, ok, "the guide has no GitLab CI section")
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := yamlBlock.FindAllStringSubmatch(section, -1)
	require.Len(t, blocks, 2, "the job, then the note")
	dir := t.TempDir()
	var jobs map[string]gitlabJob
	require.NoError(t, os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(blocks[0][1]), 0o644))
	yamlInto(t, filepath.Join(dir, "job.yaml"), &jobs)
	job, ok := jobs["rotate-certs-diff"]
	require.True(t, ok, "no job rotate-certs-diff")
	var note struct {
		Script []string `json:"script"`
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "note.yaml"), []byte("script:\n"+blocks[1][1]), 0o644))
	yamlInto(t, filepath.Join(dir, "note.yaml"), &note)
	last := len(job.Script) - 1
	require.Equal(t, `exit "$status"`, job.Script[last], "the note goes before the job's last line")
	job.Script = append(append(job.Script[:last:last], note.Script...), job.Script[last])
	return job
}

// goStub is `go install` of this module's command: it installs the
// binary under test where go install puts it.
const goStub = `#!/usr/bin/env bash
set -eu
if [ "$#" -ne 2 ] || [ "$1" != install ]; then echo "go stand-in: not go install PACKAGE@VERSION: $*" >&2; exit 3; fi
case $2 in
MODULE/cmd/rotate-certs@?*) ;;
*) echo "go stand-in: $2 is not MODULE/cmd/rotate-certs@VERSION" >&2; exit 3 ;;
esac
bin=${GOBIN:-${GOPATH:-$HOME/go}/bin}
mkdir -p "$bin" && cp BINARY "$bin/rotate-certs"
`

// curlStub is GitLab's notes API: it records each request (method, URL,
// headers, body) and serves notes.json to a GET.
const curlStub = `#!/usr/bin/env bash
set -eu
dir=DIR
method=GET data= url=
while [ "$#" -gt 0 ]; do
	case $1 in
	-X) method=$2; shift 2 ;;
	-H) echo "$2" >>"$dir/headers"; shift 2 ;;
	--data) data=$2; shift 2 ;;
	-*) shift ;;
	*) url=$1; shift ;;
	esac
done
echo "$method $url" >>"$dir/calls"
case $method in
GET) cat "$dir/notes.json" 2>/dev/null || echo '[]' ;;
PUT | POST) printf '%s' "$data" >"$dir/request.json"; echo '{"id": 77}' ;;
*) exit 22 ;;
esac
`

// gitlabRun is what one run of the job left.
type gitlabRun struct {
	code           int
	log            string // the job log
	report         string // the artifact
	calls, headers []string
	note           string // the note's body sent, if any
}

// The merge request the runs are for.
const (
	gitlabAPI   = "https://gitlab.example.com/api/v4"
	gitlabToken = "glpat-not-a-token"
	notesPath   = gitlabAPI + "/projects/42/merge_requests/3/notes"
)

// runGitLabJob runs job's script in r for the merge request from pr into
// main, as GitLab's runner does, with the merge request's notes.
func runGitLabJob(t *testing.T, r gateRepo, job gitlabJob, notes string) gitlabRun {
	t.Helper()
	root, api := t.TempDir(), t.TempDir()
	stubs, gopath := filepath.Join(root, "stubs"), filepath.Join(root, "go")
	require.NoError(t, os.MkdirAll(stubs, 0o755))
	module := strings.TrimPrefix(strings.SplitN(readFile(t, golden.Path("go.mod")), "\n", 2)[0], "module ")
	writeScript(t, filepath.Join(stubs, "go"), strings.NewReplacer("MODULE", module, "BINARY", binary).Replace(goStub))
	writeScript(t, filepath.Join(stubs, "curl"), strings.ReplaceAll(curlStub, "DIR", api))
	require.NoError(t, os.WriteFile(filepath.Join(api, "notes.json"), []byte(notes), 0o644))
	head := strings.TrimSpace(git(t, r.dir, r.env, "rev-parse", "pr"))
	git(t, r.dir, r.env, "checkout", "-q", "--detach", head)
	env := []string{"PATH=" + filepath.Join(gopath, "bin") + ":" + stubs + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GOPATH=" + gopath,
		"CI=true", "GITLAB_CI=true", "CI_PIPELINE_SOURCE=merge_request_event", "CI_PROJECT_DIR=" + r.dir,
		"CI_COMMIT_SHA=" + head, "CI_MERGE_REQUEST_DIFF_BASE_SHA=" + strings.TrimSpace(git(t, r.dir, r.env, "merge-base", "main", head)),
		"CI_MERGE_REQUEST_IID=3", "CI_PROJECT_ID=42", "CI_API_V4_URL=" + gitlabAPI,
		"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=pr", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main",
		"ROTATE_CERTS_NOTE_TOKEN=" + gitlabToken}
	for k, v := range job.Variables {
		env = append(env, k+"="+v)
	}
	script := filepath.Join(root, "script.sh")
	require.NoError(t, os.WriteFile(script, []byte("set -eo pipefail\nset +o noclobber\n"+strings.Join(job.Script, "\n")+"\n"), 0o644))
	res := e2eharness.Cmd{Dir: r.dir, Env: env}.Run(t, "bash", "--noprofile", "--norc", script)
	run := gitlabRun{code: res.Code, log: res.Stdout + res.Stderr}
	if b, err := os.ReadFile(filepath.Join(r.dir, job.Artifacts.Paths[0])); err == nil {
		run.report = string(b)
	}
	run.calls = lines(t, filepath.Join(api, "calls"))
	run.headers = lines(t, filepath.Join(api, "headers"))
	if b, err := os.ReadFile(filepath.Join(api, "request.json")); err == nil {
		var sent struct{ Body string }
		require.NoError(t, json.Unmarshal(b, &sent), string(b))
		run.note = sent.Body
	}
	return run
}

// writeScript writes an executable script.
func writeScript(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(text), 0o755))
}

// lines returns the lines of the file at path; none when it is absent.
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestGitLabRecipeOnGeneratorInputs runs the guide's GitLab CI job on
// merge requests of the plug-in CA repository: the root replaced in one
// step fails the pipeline, the next root staged beside the old passes; the
// report (the job log, the artifact, the note) names the Secret the
// kustomization builds and its kustomization file, and no key.
func TestGitLabRecipeOnGeneratorInputs(t *testing.T) {
	requireDiffCommand(t)
	e2eharness.Tool(t, "jq")
	job := gitlabRecipe(t)
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(readFile(t, golden.Path("go.mod")))
	require.Equal(t, "golang:"+goVersion[1], job.Image, "the image's Go builds the module")
	require.Equal(t, `$CI_PIPELINE_SOURCE == "merge_request_event"`, job.Rules[0].If)
	require.Equal(t, "0", job.Variables["GIT_DEPTH"], "the diff needs the history")
	require.Equal(t, "always", job.Artifacts.When, "the report of a failed job is kept")
	own := `[{"id": 5, "body": "looks good"}, {"id": 55, "body": "<!-- rotate-certs diff: default -->\nan earlier report"}]`
	trust := "Secret istio-system/cacerts data.root-cert.pem of bundle istio-roots (in " + meshDir + "/kustomization.yaml)"
	for _, tc := range []struct {
		name    string
		pr      func(*testing.T, string)
		notes   string
		code    int
		verdict string
		write   string // the request that writes the note
	}{
		{"the root replaced in one step", replaceRootPR, "[]", 1, "FAIL: this change breaks trust", "POST " + notesPath},
		{"the next root beside the old", stageRootPR, own, 0, "PASS: trust changes, nothing breaks, nothing is planted", "PUT " + notesPath + "/55"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newGateRepoOf(t, generatorTree)
			r.commitOn(t, "pr", tc.pr)
			run := runGitLabJob(t, r, job, tc.notes)
			require.Equal(t, tc.code, run.code, run.log)
			require.True(t, strings.HasPrefix(run.report, "### rotate-certs diff: "+tc.verdict+"\n"), run.report)
			require.Contains(t, run.report, trust)
			require.Contains(t, run.log, run.report, "the job log shows the report")
			require.Equal(t, []string{"GET " + notesPath + "?per_page=100&sort=asc", tc.write}, run.calls)
			require.Contains(t, run.headers, "PRIVATE-TOKEN: "+gitlabToken)
			require.Equal(t, gateMarker+"\n"+run.report, run.note)
			for what, text := range map[string]string{"the job log": run.log, "the artifact": run.report} {
				requireNoKey(t, what, text)
			}
		})
	}
}
