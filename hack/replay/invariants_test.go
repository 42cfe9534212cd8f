//go:build devtools

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// canned is diff's JSON with the lists given as JSON text (empty lists
// otherwise).
func canned(lists map[string]string) []byte {
	var b strings.Builder
	b.WriteString(`{"schemaVersion": "rotate-certs.dev/diff/v1", "now": "2026-01-01T00:00:00Z", "summary": {}`)
	for _, name := range []string{"trust", "breaks", "planted", "rolls", "rollouts", "alerts", "policies", "incomplete", "certificateFiles", "files"} {
		list, ok := lists[name]
		if !ok {
			if name == "incomplete" || name == "files" || name == "certificateFiles" {
				continue // lists an older diff does not write
			}
			list = "[]"
		}
		b.WriteString(`, "` + name + `": ` + list)
	}
	b.WriteString("}")
	return []byte(b.String())
}

func canRun(t *testing.T, exit int, stdout []byte, stderr string) diffRun {
	t.Helper()
	r := diffRun{Base: "base", Head: "head", Exit: exit, Stdout: stdout, Stderr: []byte(stderr)}
	r.Crash = crashOf(exit, r.Stderr)
	if out, err := decodeDiff(stdout); err == nil {
		r.Out = out
	}
	return r
}

const aRoll = `[{"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ns", "name": "web", "file": "app/web.yaml"}}]`

func TestSelfEmptyAndQuiet(t *testing.T) {
	cases := []struct {
		name string
		run  diffRun
		kind string // "" when quiet
	}{
		{"nothing listed", canRun(t, 0, canned(nil), ""), ""},
		{"a file read incompletely is not a change", canRun(t, 0, canned(map[string]string{"incomplete": `[{"file": "x.json"}]`}), ""), ""},
		{"a roll", canRun(t, 0, canned(map[string]string{"rolls": aRoll}), ""), "listed rolls"},
		{"a list diff adds later", canRun(t, 0, canned(map[string]string{"files": `[{"file": "ca.pem"}]`}), ""), "listed files"},
		{"exit 2 without output", canRun(t, 2, nil, "rotate-certs diff: at HEAD: a.yaml: not valid YAML\n"), "exit 2"},
		{"exit 2 that says PASS in JSON", canRun(t, 2, canned(nil), "rotate-certs diff: at HEAD: a.yaml: not valid YAML\n"), "exit 2"},
		{"exit 1", canRun(t, 1, canned(map[string]string{"planted": `[{"field": "data.ca.crt"}]`}), ""), "exit 1"},
		{"a crash is counted as a crash only", canRun(t, 2, nil, "panic: runtime error: index out of range\n\ngoroutine 1 [running]:\n"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			self := checkSelfEmpty(c.run)
			quiet := checkQuiet(c.run, false)
			if c.kind == "" {
				if len(self)+len(quiet) != 0 {
					t.Fatalf("want no violation, got %+v %+v", self, quiet)
				}
				return
			}
			if len(self) != 1 || self[0].Kind != c.kind || self[0].Invariant != invSelfEmpty {
				t.Fatalf("diff C C: want one %q violation, got %+v", c.kind, self)
			}
			if len(quiet) != 1 || quiet[0].Kind != c.kind || quiet[0].Invariant != invQuiet {
				t.Fatalf("quiet commit: want one %q violation, got %+v", c.kind, quiet)
			}
			if got := checkQuiet(c.run, true); len(got) != 0 {
				t.Fatalf("a commit a build reads need not be quiet, got %+v", got)
			}
		})
	}
}

func TestCrash(t *testing.T) {
	for _, c := range []struct {
		name, stderr string
		exit         int
		kind         string
	}{
		{"panic", "panic: assignment to entry in nil map\n", 2, "panic"},
		{"unknown status", "", 3, "exit status"},
		{"errors are no crash", "rotate-certs diff: at HEAD: a.yaml: not valid YAML\n", 2, ""},
	} {
		got := checkCrash(canRun(t, c.exit, nil, c.stderr))
		if c.kind == "" && len(got) != 0 || c.kind != "" && (len(got) != 1 || got[0].Kind != c.kind) {
			t.Errorf("%s: want kind %q, got %+v", c.name, c.kind, got)
		}
	}
}

// TestRunDiff runs stand-ins for the binary: the statuses and outputs
// runDiff calls a crash.
func TestRunDiff(t *testing.T) {
	cases := []struct {
		name, script, crash string
		exit                int
	}{
		{"the JSON", "echo '" + string(canned(nil)) + "'", "", 0},
		{"exit 0 without the JSON", "echo PASS", "exit 0 without the JSON", 0},
		{"exit 2 without the JSON is no crash", "echo 'rotate-certs diff: at HEAD: a.yaml: bad' >&2; exit 2", "", 2},
		{"a panic", "echo 'panic: boom' >&2; exit 2", "panic: boom", 2},
		{"a signal", "kill -9 $$", "signal: killed", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "rotate-certs")
			if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			r := runDiff(bin, t.TempDir(), "a", "b", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Minute)
			if r.Exit != c.exit || !strings.Contains(r.Crash, c.crash) || (c.crash == "") != (r.Crash == "") {
				t.Fatalf("want exit %d crash %q, got exit %d crash %q", c.exit, c.crash, r.Exit, r.Crash)
			}
		})
	}
}

const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func trustJSON(file, added, removed string) string {
	return builtJSON(file, "", added, removed)
}

// builtJSON is a trust change of an object a kustomization's build made.
func builtJSON(file, kustomization, added, removed string) string {
	ca := func(sha string) string {
		if sha == "" {
			return "[]"
		}
		return `[{"subject": "CN=x", "sha256": "` + sha + `"}]`
	}
	return `[{"resource": {"apiVersion": "v1", "kind": "Secret", "name": "s", "file": "` + file + `", "kustomization": "` + kustomization + `"}, "field": "data.ca.crt", "added": ` +
		ca(added) + `, "removed": ` + ca(removed) + `, "kept": [], "consumers": []}]`
}

func TestReported(t *testing.T) {
	replaced := trustDelta{
		Old:   place{File: "app/ca.yaml", Doc: "Secret s", Path: "data.ca.crt", Kind: kindData},
		New:   place{File: "app/ca.yaml", Doc: "Secret s", Path: "data.ca.crt", Kind: kindData},
		Added: []string{shaB}, Removed: []string{shaA}, CAs: caSet{shaA: "CN=a", shaB: "CN=b"},
	}
	generated := trustDelta{New: place{File: "app/certs/ca.pem", Kind: kindKustomizeInput},
		Added: []string{shaB}, CAs: caSet{shaB: "CN=b"}, Lenient: true}
	patched := replaced
	patched.Old.File, patched.New.File, patched.Lenient = "overlay/prod/patch.yaml", "overlay/prod/patch.yaml", true
	certFile := trustDelta{New: place{File: "test/ca.pem", Kind: kindCertFile}, Added: []string{shaB}, CAs: caSet{shaB: "CN=b"}}
	noKind := trustDelta{New: place{File: "testdata/in.yaml", Doc: "document 1", Path: "configMaps[0].data.ca.crt", Kind: kindNoKind},
		Added: []string{shaB}, CAs: caSet{shaB: "CN=b"}}
	cases := []struct {
		name  string
		delta trustDelta
		trust string
		files string // diff's certificateFiles
		want  string // a fragment of the detail; "" for no violation
	}{
		{"reported", replaced, trustJSON("app/ca.yaml", shaB, shaA), "", ""},
		{"reported in upper case", replaced, trustJSON("app/ca.yaml", strings.ToUpper(shaB), strings.ToUpper(shaA)), "", ""},
		{"not reported", replaced, "[]", "", "added, not reported: CN=b (sha256 bbbbbbbbbbbbbbbb); removed, not reported: CN=a"},
		{"the removal lost", replaced, trustJSON("app/ca.yaml", shaB, ""), "", "removed, not reported: CN=a"},
		{"reported for another file (a copy)", replaced, trustJSON("other/ca.yaml", shaB, shaA), "", "added, not reported"},
		{"a generator's input, reported for its kustomization", generated, trustJSON("app/kustomization.yaml", shaB, ""), "", ""},
		{"a generator's input, reported elsewhere", generated, trustJSON("other/kustomization.yaml", shaB, ""), "", "added, not reported"},
		{"a patch, reported for the object its build made", patched, builtJSON("base/ca.yaml", "overlay/prod/kustomization.yaml", shaB, shaA), "", ""},
		{"a patch, reported for another build", patched, builtJSON("base/ca.yaml", "overlay/dev/kustomization.yaml", shaB, shaA), "", "added, not reported"},
		{"a certificate file listed, not judged", certFile, "[]", `[{"file": "test/ca.pem", "change": "added"}]`, ""},
		{"a certificate file not listed", certFile, "[]", `[{"file": "test/other.pem", "change": "added"}]`, "added, not reported"},
		{"YAML without a kind listed, not judged", noKind, "[]", `[{"file": "testdata/in.yaml", "change": "added"}]`, ""},
		{"YAML without a kind not listed", noKind, "[]", "", "added, not reported"},
		{"a manifest is not a certificate file", replaced, "[]", `[{"file": "app/ca.yaml", "change": "changed"}]`, "added, not reported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lists := map[string]string{"trust": c.trust}
			if c.files != "" {
				lists["certificateFiles"] = c.files
			}
			got := checkReported(canRun(t, 0, canned(lists), ""), []trustDelta{c.delta})
			if c.want == "" {
				if len(got) != 0 {
					t.Fatalf("want none, got %+v", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0].Detail, c.want) || got[0].Kind != c.delta.at().Kind {
				t.Fatalf("want one violation saying %q, got %+v", c.want, got)
			}
		})
	}
}

func TestRolls(t *testing.T) {
	rolls := `[` + strings.Trim(aRoll, "[]") + `, {"resource": {"kind": "Deployment", "name": "later", "file": "app/later.yaml"}, "wave": "2"},
		{"resource": {"kind": "Deployment", "name": "built", "file": "app/kustomization.yaml"}},
		{"resource": {"kind": "Deployment", "name": "copied", "file": "app/copy-1.yaml"}, "wave": "now"}]`
	verdicts := map[string]templateVerdict{"web": templateSame, "later": templateSame, "built": templateUnchecked, "copied": templateSameCopies}
	got, unchecked := checkRolls(canRun(t, 0, canned(map[string]string{"rolls": rolls}), ""), func(r resource) templateVerdict {
		return verdicts[r.Name]
	})
	if len(got) != 2 || got[0].Invariant != invRoll || !strings.Contains(got[0].Detail, "Deployment ns/web (app/web.yaml)") ||
		!strings.Contains(got[0].Kind, "one copy") || !strings.Contains(got[1].Kind, "twice or more") {
		t.Fatalf("want violations for web and copied (a roll in a later wave is no roll now, wave \"now\" is), got %+v", got)
	}
	if unchecked != 1 {
		t.Fatalf("want 1 unchecked roll, got %d", unchecked)
	}
	verdicts["web"], verdicts["copied"] = templateChanged, templateChanged
	if got, _ := checkRolls(canRun(t, 0, canned(map[string]string{"rolls": rolls}), ""), func(r resource) templateVerdict {
		return verdicts[r.Name]
	}); len(got) != 0 {
		t.Fatalf("a changed template: want none, got %+v", got)
	}
}

func TestExit2(t *testing.T) {
	files := map[string]bool{"app/a.yaml": true, "web/tsconfig.json": true, "test/dup.yaml": true}
	isFile := func(f string) bool { return files[f] }
	touched := map[string]bool{"app/a.yaml": true}
	cases := []struct {
		name, stderr string
		kind         string
	}{
		{"a touched file", "rotate-certs diff: at HEAD: app/a.yaml: not valid YAML: line 3\n", ""},
		{"an untouched file", "rotate-certs diff: warning: at BASE: web/tsconfig.json: not valid YAML\nrotate-certs diff: at HEAD: web/tsconfig.json: not valid YAML: line 1\n", "exit 2 from an untouched file"},
		{"with a line number", "rotate-certs diff: at HEAD: test/dup.yaml:18: mapping key \"a\" already defined at line 15\n", "exit 2 from an untouched file"},
		{"a quoted file", "rotate-certs diff: at HEAD: \"test/dup.yaml\": duplicate\n", "exit 2 from an untouched file"},
		{"no file", "rotate-certs diff: at HEAD: Secret kube-system/lb data.dh.pem: invalid base64\n", "exit 2 without a file"},
		{"a build whose input the commit touched", "rotate-certs diff: at HEAD: test/dup.yaml: its build reads app/a.yaml, changed in this change; fix the build: kustomize build fails: x\n", ""},
		{"a build whose inputs are untouched", "rotate-certs diff: at HEAD: test/dup.yaml: kustomize build fails: no matches for Id HelmRelease\n", "exit 2 from an untouched file"},
		{"a file only in a warning", "rotate-certs diff: warning: at BASE: web/tsconfig.json: not valid YAML\nrotate-certs diff: at HEAD: policy p: cannot be applied\n", "exit 2 without a file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := checkExit2(canRun(t, 2, nil, c.stderr), touched, isFile)
			if c.kind == "" && len(got) != 0 || c.kind != "" && (len(got) != 1 || got[0].Kind != c.kind) {
				t.Fatalf("want kind %q, got %+v", c.kind, got)
			}
		})
	}
	if got := checkExit2(canRun(t, 0, canned(nil), "rotate-certs diff: at HEAD: web/tsconfig.json: x\n"), touched, isFile); len(got) != 0 {
		t.Fatalf("exit 0 is no exit 2: %+v", got)
	}
}

func TestScrub(t *testing.T) {
	key := "-----BEGIN PRIVATE KEY-----\n" + strings.Repeat("MC4CAQAwBQYDK2VwBCIEI", 5) + "\n-----END PRIVATE KEY-----"
	got := scrub("at HEAD: Secret s data.key: " + key)
	if strings.Contains(got, "MC4CAQAw") || strings.Contains(got, "BEGIN PRIVATE KEY") {
		t.Fatalf("key material left: %q", got)
	}
	if kept := scrub("app/a.yaml Secret ns/s data.ca.crt (sha256 " + shaA[:16] + ")"); !strings.Contains(kept, shaA[:16]) {
		t.Fatalf("a short SHA-256 was redacted: %q", kept)
	}
}
