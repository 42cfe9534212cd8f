//go:build devtools

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	var times []time.Duration
	for i := 1; i <= 200; i++ {
		times = append(times, time.Duration(i)*time.Second)
	}
	if got := quantile(times, 0.5); got != 100 {
		t.Errorf("median of 1..200 s: got %v", got)
	}
	if got := quantile(times, 0.99); got != 198 {
		t.Errorf("p99 of 1..200 s: got %v", got)
	}
	if got := quantile(nil, 0.5); got != 0 {
		t.Errorf("no times: got %v", got)
	}
}

// TestReport counts canned results: the table's columns, the totals, the
// kinds with their commits, and the JSON.
func TestReport(t *testing.T) {
	repos := []*repoRun{
		{Spec: repoSpec{Name: "o/a"}, Head: "aaaa", Total: 3, All: true, Dirs: kustomizeDirs{},
			Selected: []commit{{Hash: "a3", Parent: "a2", Files: []string{"main.go"}}, {Hash: "a2", Parent: "a1", Files: []string{"x.yaml"}},
				{Hash: "a1", Files: []string{"README.md"}}}},
		{Spec: repoSpec{Name: "o/b"}, Head: "bbbb", Total: 90, Selected: []commit{{Hash: "b2"}, {Hash: "b1"}}},
	}
	rep := newReport("test", 2, repos)
	roll := violation{Repo: "o/b", Commit: "b2", Invariant: invRoll, Kind: "template unchanged, one copy in its directory"}
	for _, res := range []commitResult{
		{Repo: "o/a", Commit: "a3", Elapsed: time.Second, Checked: true, Deltas: 2},
		{Repo: "o/a", Commit: "a2", Elapsed: 2 * time.Second, ChangeExit: 2,
			Violations: []violation{{Repo: "o/a", Commit: "a2", Invariant: invExit2, Kind: "exit 2 without a file", Detail: "a | b"}}},
		{Repo: "o/a", Commit: "a1", Root: true, ChangeExit: -2, Elapsed: 3 * time.Second},
		{Repo: "o/b", Commit: "b2", Elapsed: 4 * time.Second, Checked: true, Violations: []violation{roll, roll}},
		{Repo: "o/b", Commit: "b1", Elapsed: 5 * time.Second, Err: "git diff-tree: failed"},
	} {
		rep.add(res)
	}
	rep.finish()
	var md bytes.Buffer
	rep.writeMarkdown(&md)
	for _, want := range []string{
		"| o/a | 3 | 0 | 0 | 0 | 0 | 1 | 0 | 2.00 | 3.00 |",
		"| o/b | 2 | 0 | 0 | 0 | 2 | 0 | 0 | 4.00 | 5.00 |",
		"| **total** | 5 | 0 | 0 | 0 | 2 | 1 | 0 | 3.00 | 5.00 |",
		"| o/a | 1 / 0 / 1 / 0 | 3 / 0 / 0 / 0 | 1 | 1 | 2 | 0 | 0 | 0 |",
		"| o/b | 2 / 0 / 0 / 0 | 2 / 0 / 0 / 0 | 0 | 1 | 0 | 0 | 0 | 1 |",
		"| " + invRoll + " | template unchanged, one copy in its directory | o/b | 2 | 1 | `b2` |",
		"a \\| b",
		"every commit (3)", "2 of 90 commits",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the tables lack %q:\n%s", want, md.String())
		}
	}
	file := filepath.Join(t.TempDir(), "replay.json")
	if err := rep.writeJSON(file); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Violations   []violation `json:"violations"`
		Repositories []struct {
			Errors []string `json:"harnessErrors"`
		} `json:"repositories"`
	}
	raw, _ := os.ReadFile(file)
	if err := json.Unmarshal(raw, &back); err != nil || len(back.Violations) != 3 || len(back.Repositories[1].Errors) != 1 {
		t.Fatalf("the JSON: %v %+v", err, back)
	}
}
