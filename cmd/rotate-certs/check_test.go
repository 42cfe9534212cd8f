package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// checkDir holds the golden cases of `check`: input.yaml is a template
// (testpki.TemplateFuncs), expected.txt/.json/.svg the outputs at
// checkNow. UPDATE_GOLDEN=1 rewrites them; review the diff.
const checkDir = "../../testdata/check"

const checkNow = "2026-11-22T00:00:00Z"

// runCLI runs the root command with args and stdin and returns stdout,
// stderr and the exit status main would use.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := newRootCommand(strings.NewReader(stdin), &out, &errb)
	cmd.SetArgs(args)
	err := cmd.Execute()
	code := 0
	if err != nil {
		var c exitCode
		if asExitCode(err, &c) {
			code = int(c)
		} else {
			errb.WriteString(err.Error())
			code = 1
		}
	}
	return out.String(), errb.String(), code
}

func expand(t *testing.T, path string) string {
	t.Helper()
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	b, err := testpki.ExpandTemplate(path, string(text))
	require.NoError(t, err)
	return string(b)
}

func golden(t *testing.T, path, actual string) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		require.NoError(t, os.WriteFile(path, []byte(actual), 0o644))
	}
	expected, err := os.ReadFile(path)
	require.NoError(t, err, "missing %s: run with UPDATE_GOLDEN=1 and review it", path)
	require.Equal(t, string(expected), actual, "output differs from %s", path)
}

// keyMaterial fails the test when s holds any private key of the
// fixtures, in PEM or base64, or a PEM private key header.
func requireNoKeyMaterial(t *testing.T, s string) {
	t.Helper()
	require.NotContains(t, s, "PRIVATE KEY")
	for _, name := range []string{"leaf-new", "leaf-old", "client-old", "kube-admin"} {
		k := testpki.Fixture(name).KeyPEM()
		body := strings.Join(strings.Split(string(k), "\n")[1:2], "")
		require.NotContains(t, s, body, "key material of %s printed", name)
		tmpl, err := testpki.ExpandTemplate("k", `{{keyb64 "`+name+`"}}`)
		require.NoError(t, err)
		require.NotContains(t, s, string(tmpl), "base64 key of %s printed", name)
	}
}

func TestCheckGolden(t *testing.T) {
	in := expand(t, filepath.Join(checkDir, "rotation", "input.yaml"))
	for _, tc := range []struct{ format, file string }{
		{"table", "expected.txt"},
		{"json", "expected.json"},
		{"svg", "expected.svg"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			out, stderr, code := runCLI(t, in, "check", "-", "--now", checkNow, "-o", tc.format)
			golden(t, filepath.Join(checkDir, "rotation", tc.file), out)
			require.Equal(t, 1, code, "an expired root and a machine inside fail-within must exit 1; stderr: %s", stderr)
			requireNoKeyMaterial(t, out+stderr)
		})
	}
}

// TestExampleTimeline keeps the README's example current: the committed
// manifests are the expanded golden input, the SVG its timeline.
func TestExampleTimeline(t *testing.T) {
	in := expand(t, filepath.Join(checkDir, "rotation", "input.yaml"))
	golden(t, "../../examples/report/manifests.yaml", in)
	out, _, code := runCLI(t, "", "check", "../../examples/report", "--now", checkNow, "-o", "svg")
	require.Equal(t, 1, code)
	golden(t, "../../examples/report/timeline.svg", out)
}

var _ = json.Valid
var _ = xml.Unmarshal
var _ = exec.LookPath
var _ = io.EOF
