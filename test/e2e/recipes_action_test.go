package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/stretchr/testify/require"
)

// The GitHub Action on a repository with generator inputs (recipes_test.go
// has the repository), run as TestPullRequestGate runs it.

// wfCommand is a workflow command of a job log: ::name k=v,k=v::data.
type wfCommand struct {
	name  string
	props map[string]string
	data  string
}

// workflowCommands reads log as GitHub's runner reads a step's output:
// the workflow commands, with those between ::stop-commands::TOKEN and
// ::TOKEN:: not taken for commands but kept as raw lines.
func workflowCommands(log string) (cmds []wfCommand, raw []string) {
	unescape := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
	stop := ""
	for _, line := range strings.Split(log, "\n") {
		if stop != "" {
			if line == "::"+stop+"::" {
				stop = ""
			} else {
				raw = append(raw, line)
			}
			continue
		}
		rest, ok := strings.CutPrefix(line, "::")
		head, data, found := strings.Cut(rest, "::")
		if !ok || !found {
			continue
		}
		name, props, _ := strings.Cut(head, " ")
		if name == "stop-commands" {
			stop = data
			continue
		}
		c := wfCommand{name: name, props: map[string]string{}, data: unescape.Replace(data)}
		for _, kv := range strings.Split(props, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				c.props[k] = unescape.Replace(v)
			}
		}
		cmds = append(cmds, c)
	}
	return cmds, raw
}

// A recipeCase is a pull request on the generator repository and what the
// action must make of it.
type recipeCase struct {
	name    string
	before  func(*testing.T, string) // a commit on main before the branch
	pr      func(*testing.T, string)
	code    int
	verdict string // "": diff failed
	outputs map[string]string
	body    []string    // the comment says these
	warn    []wfCommand // warnings and errors the log carries (data: a part of it)
}

func actionGeneratorCases() []recipeCase {
	quiet := map[string]string{"warnings": "0", "comment-action": "created"}
	with := func(m map[string]string) map[string]string {
		for k, v := range quiet {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		return m
	}
	trust := "Secret istio-system/cacerts data.root-cert.pem of bundle istio-roots (in " + meshDir + "/kustomization.yaml)"
	return []recipeCase{
		{name: "the root replaced in one step breaks", pr: replaceRootPR, code: 1, verdict: "FAIL: this change breaks trust",
			outputs: with(map[string]string{"breaks": "1", "added": "1", "removed": "1", "planted": "0", "certificate-files": "0"}),
			body: []string{"Secret istio-system/cacerts data.ca-cert.pem (CN=Intermediate CA", trust,
				"Deployment istio-system/root-reader via env (reads once)"}},
		{name: "the next root beside the old passes", pr: stageRootPR, code: 0, verdict: "PASS: trust changes, nothing breaks, nothing is planted",
			outputs: with(map[string]string{"breaks": "0", "added": "1", "removed": "0", "planted": "0"}),
			body:    []string{trust, "source (ConfigMap istio-system/istio-root-ca data.root-cert.pem)"}},
		{name: "root files no build reads: named, not judged", pr: newRootFilesPR, code: 0,
			verdict: "PASS: no change to trust in what is read; certificate files changed, not judged",
			outputs: with(map[string]string{"added": "0", "removed": "0", "certificate-files": "2"}),
			body:    []string{meshDir + "/root-cert.pem: changed;", meshDir + "/root-key.pem: changed;"}},
		{name: "a key in a generator's env file warns", pr: keyInSettingsPR, code: 0,
			verdict: "PASS with warnings: nothing breaks, nothing is planted; read the warnings",
			outputs: with(map[string]string{"warnings": "1", "breaks": "0"}),
			body:    []string{"ConfigMap istio-system/istiod-settings-"},
			warn: []wfCommand{{props: map[string]string{"title": "rotate-certs diff (privateKey)", "file": meshDir + "/kustomization.yaml"},
				data: "data.SIGNING_KEY: holds private key material"}}},
		{name: "diff's own warnings are annotations and listed", before: fixturesNoise, pr: stageRootPR, code: 0,
			verdict: "PASS: trust changes, nothing breaks, nothing is planted (1 unchanged file(s) not read)",
			outputs: with(map[string]string{"warnings": "2", "added": "1"}),
			body: []string{"<details><summary>Printed by rotate-certs diff (2 line(s))</summary>\n\n    warning: at HEAD: ",
				"    warning: not read at BASE or HEAD, and unchanged (the verdict does not cover it): clusters/fixtures/broken.yaml"},
			warn: []wfCommand{{props: map[string]string{"title": "rotate-certs diff"}, data: "at HEAD: "},
				{props: map[string]string{"title": "rotate-certs diff"}, data: "not read at BASE or HEAD, and unchanged (the verdict does not cover it): clusters/fixtures/broken.yaml"}}},
		{name: "a generator input removed: the comment says why diff failed", pr: removeChainPR, code: 2,
			outputs: map[string]string{"warnings": "0", "comment-action": "created"},
			body: []string{"**rotate-certs diff failed** (exit 2)", "<details><summary>Printed by rotate-certs diff (1 line(s))</summary>\n\n    at HEAD: " +
				meshDir + "/kustomization.yaml: its build reads " + meshDir + "/cluster1/cert-chain.pem, changed in this change"},
			warn: []wfCommand{{name: "error", props: map[string]string{"title": "rotate-certs diff"}, data: meshDir + "/cluster1/cert-chain.pem"}}},
	}
}

// TestActionOnGeneratorInputs runs the action's diff step on pull requests
// of the plug-in CA repository: the verdict, the exit status, the outputs
// and the comment name the Secret the kustomization builds and its
// kustomization file; a certificate file no build reads is named, not
// judged, and gets a comment; every warning - the report's, and those diff
// prints on its own - is a workflow command and in the comment; nothing
// diff printed is taken for a workflow command; no key material anywhere.
func TestActionOnGeneratorInputs(t *testing.T) {
	requireDiffCommand(t)
	e2eharness.Tool(t, "jq")
	a := loadAction(t)
	for _, tc := range actionGeneratorCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := newGateRepoOf(t, generatorTree)
			if tc.before != nil {
				r.commitOn(t, "main", tc.before)
			}
			r.commitOn(t, "pr", tc.pr)
			with := prWorkflowWith(t)
			with["args"] = "--now " + gateNow
			run := r.runAction(t, a, with)
			require.Equal(t, tc.code, run.code, run.stderr)
			require.Equal(t, fmt.Sprint(tc.code), run.outputs["exit-code"])
			for k, v := range tc.outputs {
				require.Equal(t, v, run.outputs[k], "output %s:\n%s", k, run.stderr)
			}
			for _, want := range tc.body {
				require.Contains(t, run.body, want)
			}
			if tc.verdict != "" {
				require.True(t, strings.HasPrefix(run.body, gateMarker+"\n### rotate-certs diff: "+tc.verdict+"\n"), "the verdict comes first:\n%s", run.body)
				r.checkBody(t, run, strings.Fields(with["args"]))
			}
			checkAnnotations(t, run, tc.warn)
			json, _ := os.ReadFile(run.outputs["json-file"]) // none when diff failed
			for what, text := range map[string]string{"the log": run.stderr, "the comment": run.body, "the JSON": string(json), "the outputs": fmt.Sprint(run.outputs)} {
				requireNoKey(t, what, text)
			}
			if tc.code == 1 {
				require.Contains(t, string(json), `"kustomization": "`+meshDir+`/kustomization.yaml"`)
			}
		})
	}
}

// checkAnnotations checks the workflow commands of a run's log: as many
// warnings as the output says, each of want among them (a warning when
// want names no command), and diff's own lines in the log only where
// commands are stopped.
func checkAnnotations(t *testing.T, run gateRun, want []wfCommand) {
	t.Helper()
	cmds, raw := workflowCommands(run.stderr)
	warnings := 0
	for _, c := range cmds {
		require.Contains(t, []string{"warning", "notice", "error"}, c.name, "the action gives no other workflow command: %+v", c)
		if c.name == "warning" {
			warnings++
		}
	}
	require.Equal(t, run.outputs["warnings"], fmt.Sprint(warnings), "%+v", cmds)
	for _, w := range want {
		if w.name == "" {
			w.name = "warning"
		}
		found := false
		for _, c := range cmds {
			match := c.name == w.name && strings.Contains(c.data, w.data)
			for k, v := range w.props {
				match = match && c.props[k] == v
			}
			found = found || match
		}
		require.True(t, found, "no %+v among %+v", w, cmds)
	}
	for _, line := range strings.Split(run.stderr, "\n") {
		if strings.HasPrefix(line, "rotate-certs diff: ") {
			require.Contains(t, raw, line, "diff's line is printed where workflow commands are on")
		}
	}
}
