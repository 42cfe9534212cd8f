package main

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/diff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// diffDirs writes a base and a head directory: at HEAD the CA Secret holds
// its key beside a CA nothing explains.
func diffDirs(t *testing.T) (base, head, key string) {
	t.Helper()
	caOld, attacker := testpki.Fixture("ca-2025"), testpki.Fixture("attacker-ca")
	enc := base64.StdEncoding.EncodeToString
	manifest := func(ca testpki.Cert) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: trust, namespace: a}\ndata:\n  ca.crt: " + enc(ca.PEM()) +
			"\n  ca.key: " + enc(ca.KeyPEM()) + "\n"
	}
	dir := t.TempDir()
	base, head = filepath.Join(dir, "base"), filepath.Join(dir, "head")
	for d, ca := range map[string]testpki.Cert{base: caOld, head: attacker} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "trust.yaml"), []byte(manifest(ca)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base, head, string(attacker.KeyPEM())
}

// TestDiffNeverEchoesKeyMaterial is diff's row of the every-command
// key-material test: a Secret holding a key beside its CA at HEAD, in
// every format.
func TestDiffNeverEchoesKeyMaterial(t *testing.T) {
	base, head, key := diffDirs(t)
	lines := strings.Split(strings.TrimSpace(key), "\n")
	for _, format := range []string{"table", "markdown", "json"} {
		out, stderr, code := runCLI(t, "", "diff", base, head, "-o", format, "--now", "2026-11-22")
		if code != 1 {
			t.Errorf("-o %s: exit %d, want 1 (planted)\n%s", format, code, stderr)
		}
		for _, s := range []string{out, stderr} {
			if strings.Contains(s, "PRIVATE KEY") || strings.Contains(s, lines[1]) || strings.Contains(s, base64.StdEncoding.EncodeToString([]byte(key))[:40]) {
				t.Fatalf("-o %s echoes key material:\n%s", format, s)
			}
		}
	}
}

func TestDiffUsage(t *testing.T) {
	base, head, _ := diffDirs(t)
	cases := []struct {
		name   string
		args   []string
		want   int
		stderr string // a line stderr holds: every line of diff's own starts "rotate-certs diff: "
	}{
		{"unknown format", []string{"diff", base, head, "-o", "yaml"}, 2, "rotate-certs diff: -o \"yaml\": want table, markdown or json"},
		{"bad --now", []string{"diff", base, head, "--now", "soon"}, 2, "rotate-certs diff: --now: "},
		{"no BASE", []string{"diff"}, 2, "rotate-certs diff: requires at least 1 arg(s)"},
		{"BASE neither revision nor directory", []string{"diff", filepath.Join(base, "nothing")}, 2, "rotate-certs diff: BASE "},
		{"directories and a PATH", []string{"diff", base, head, "x"}, 2, "rotate-certs diff: BASE "},
		{"HEAD directory missing", []string{"diff", base, filepath.Join(head, "nothing")}, 2, "rotate-certs diff: HEAD " + filepath.Join(head, "nothing") + " is not a directory"},
		{"same directory twice", []string{"diff", base, base}, 0, ""},
		{"planted", []string{"diff", base, head}, 1, "rotate-certs diff: 0 break(s), 1 planted"},
		{"allowed planted", []string{"diff", base, head, "--allow-unexplained"}, 0, "rotate-certs diff: warning: 1 planted (allowed by --allow-unexplained)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", tc.args...)
			if code != tc.want {
				t.Errorf("exit %d, want %d\n%s", code, tc.want, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) || (tc.stderr == "") != (stderr == "") {
				t.Errorf("stderr %q, want a line with %q", stderr, tc.stderr)
			}
			for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
				if line != "" && !strings.HasPrefix(line, "rotate-certs diff: ") {
					t.Errorf("stderr line %q does not start with \"rotate-certs diff: \"", line)
				}
			}
		})
	}
}

// A private key committed in a ConfigMap is a warning naming the object
// and field, in every format, never the key; the exit status stays 0.
func TestDiffWarnsOfAKeyOutsideASecret(t *testing.T) {
	leaf := testpki.Fixture("leaf-old")
	key := string(leaf.KeyPEM())
	dir := t.TempDir()
	base, head := filepath.Join(dir, "base"), filepath.Join(dir, "head")
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: app}\ndata:\n  server.key: |\n    " +
		strings.ReplaceAll(strings.TrimSpace(key), "\n", "\n    ") + "\n"
	for d, files := range map[string]map[string]string{base: {"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: app}\n"},
		head: {"ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: app}\n", "config.yaml": cm}} {
		for name, text := range files {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	body := strings.Split(strings.TrimSpace(key), "\n")[1]
	for _, format := range []string{"table", "markdown", "json"} {
		out, stderr, code := runCLI(t, "", "diff", base, head, "-o", format, "--now", "2026-11-22")
		if code != 0 {
			t.Errorf("-o %s: exit %d, want 0 (a warning)\n%s", format, code, stderr)
		}
		if !strings.Contains(out, "ConfigMap") || !strings.Contains(out, "data.server.key") || !strings.Contains(out, "holds private key material") {
			t.Errorf("-o %s does not name the place:\n%s", format, out)
		}
		if strings.Contains(out+stderr, body) || strings.Contains(out+stderr, "PRIVATE KEY") {
			t.Fatalf("-o %s echoes key material:\n%s", format, out)
		}
	}
}

// TestPreCommitSides: --pre-commit compares what pre-commit hands a hook -
// the commit being made, or the range of `pre-commit run --from-ref A
// --to-ref B` and of a push from its merge base - and fails closed on a
// half-set or unknown range (before, the hook's `diff HEAD` compared an
// unchanged working tree under --from-ref and passed every range).
func TestPreCommitSides(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@rotate-certs.dev"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	run("commit", "-q", "--allow-empty", "-m", "base")
	fork := run("rev-parse", "HEAD")
	run("checkout", "-q", "-b", "pr")
	run("commit", "-q", "--allow-empty", "-m", "the change")
	run("checkout", "-q", "main")
	run("commit", "-q", "--allow-empty", "-m", "main moves on")
	for _, tc := range []struct {
		name       string
		env        map[string]string
		base, head diff.Side
		err        string
	}{
		{"a commit being made", nil, diff.Side{Rev: "HEAD"}, diff.Side{Dir: dir}, ""},
		{"a range, from its merge base", map[string]string{"PRE_COMMIT_FROM_REF": "main", "PRE_COMMIT_TO_REF": "pr"}, diff.Side{Rev: fork}, diff.Side{Rev: "pr"}, ""},
		{"half a range", map[string]string{"PRE_COMMIT_TO_REF": "pr"}, diff.Side{}, diff.Side{}, "set together"},
		{"an unknown ref", map[string]string{"PRE_COMMIT_FROM_REF": "mian", "PRE_COMMIT_TO_REF": "pr"}, diff.Side{}, diff.Side{}, `"mian" is not a commit`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head, err := preCommitSides(dir, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || base != tc.base || head != tc.head {
				t.Fatalf("sides %+v %+v, %v; want %+v %+v", base, head, err, tc.base, tc.head)
			}
		})
	}
}
