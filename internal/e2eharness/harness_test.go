package e2eharness

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCmdRun(t *testing.T) {
	for _, tc := range []struct {
		name, script, stdin string
		stdout, stderr      string
		code                int
		exitErr             bool
	}{
		{"success", "cat; echo out", "in\n", "in\nout\n", "", 0, false},
		{"failure", "echo out; echo err >&2; exit 3", "", "out\n", "err\n", 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Cmd{Dir: t.TempDir(), Stdin: tc.stdin}.Run(t, "sh", "-c", tc.script)
			if r.Stdout != tc.stdout || r.Stderr != tc.stderr || r.Code != tc.code {
				t.Fatalf("got stdout %q stderr %q code %d, want %q %q %d", r.Stdout, r.Stderr, r.Code, tc.stdout, tc.stderr, tc.code)
			}
			var exit *exec.ExitError
			if errors.As(r.Err, &exit) != tc.exitErr {
				t.Fatalf("err %v: want an *exec.ExitError: %v", r.Err, tc.exitErr)
			}
		})
	}
}

// TestFindTool: the repository's bin/ first, then PATH; a missing program
// is not found, and the skip message names how to get it.
func TestFindTool(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kpt"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if p, ok := findTool("kpt"); !ok || p != filepath.Join(dir, "kpt") {
		t.Errorf("kpt on PATH: got %q %v", p, ok)
	}
	if p, ok := findTool("rotate-certs-no-such-tool"); ok {
		t.Errorf("a missing program was found at %q", p)
	}
	for name, want := range map[string]string{
		"kustomize": "make tools", "helm": "make tools", "podman": "make container-tools", "runc": "make container-tools", "keytool": "make test-tools",
		"registry": "make registry", "goreleaser": "make goreleaser", "ko": "make ko", "cosign": "make cosign",
	} {
		if msg := howToGet(name); !strings.Contains(msg, want) {
			t.Errorf("%s: %q does not name %s", name, msg, want)
		}
	}
}

func TestReadDockerfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "Dockerfile")
	text := "# syntax comment\nARG GO_VERSION=1.26.0\n\nFROM golang:${GO_VERSION} AS build\n" +
		"ENV CGO_ENABLED=0 GOTOOLCHAIN=local\nRUN go build \\\n    -o /out/x .\n" +
		"FROM scratch\nUSER 65532:65532\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	global, stages := Stages(ReadDockerfile(t, path))
	if len(global) != 1 || global[0] != (Instruction{"ARG", "GO_VERSION=1.26.0"}) {
		t.Fatalf("global %v", global)
	}
	if len(stages) != 2 || len(stages[0]) != 3 || len(stages[1]) != 2 {
		t.Fatalf("stages %v", stages)
	}
	if run := stages[0][2]; run != (Instruction{"RUN", "go build  -o /out/x ."}) {
		t.Errorf("continuation lines: %+v", run)
	}
	if env := Assignments(stages[0][1].Args); env["CGO_ENABLED"] != "0" || env["GOTOOLCHAIN"] != "local" {
		t.Errorf("ENV %v", env)
	}
}

// TestFiles: regular files by relative path; .git and links are left out.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for rel, text := range map[string]string{"a.yaml": "a", "sub/b.yaml": "b", ".git/HEAD": "ref"} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.yaml", filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	got := Files(t, dir)
	want := map[string]string{"a.yaml": "a", filepath.Join("sub", "b.yaml"): "b"}
	if len(got) != len(want) || got["a.yaml"] != "a" || got[filepath.Join("sub", "b.yaml")] != "b" {
		t.Fatalf("Files = %v, want %v", got, want)
	}
}

// The Makefile pins the releases the tests look for.
func TestMakefilePinsTheSameReleases(t *testing.T) {
	data, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ARGOCD_VERSION := (\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("Makefile has no ARGOCD_VERSION := line")
	}
	if string(m[1]) != ArgoCDVersion {
		t.Errorf("Makefile ARGOCD_VERSION %s, ArgoCDVersion %s: make tools would build another release than the tests look for", m[1], ArgoCDVersion)
	}
}

// The registry answers the OCI distribution API's version check.
func TestStartRegistry(t *testing.T) {
	host := StartRegistry(t)
	resp, err := http.Get("http://" + host + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v2/: %s", resp.Status)
	}
}
