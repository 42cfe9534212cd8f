package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// Comments and layout of what the function does not manage survive every
// render, on every path: function mode's fast path (the layout kustomize
// and kpt send), kyaml's reader (any other layout; CRLF here), and render.
// Each case renders four times, the source CA alternating so that the
// target changes every time.

// commentPolicy replaces the target with the source's CA at every render.
const commentPolicy = `apiVersion: rotate-certs.dev/v1alpha1
kind: RotationPolicy
metadata: {name: p}
spec:
  now: "2026-11-22T00:00:00Z"
  trustBundles:
  - name: gw
    sources:
    - secret: {name: ca, namespace: gw}
    target: {name: trust, kind: ConfigMap}
    retain: {maxPrevious: 0}
`

// targetWithFootComment is a ConfigMap target whose bundle key is followed
// by a comment at its own indentation (the key's foot comment in YAML).
func targetWithFootComment() string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: trust\n  namespace: gw\ndata:\n  ca-bundle.crt: |\n" +
		indent(string(testpki.Fixture("ca-2025").PEM()), "    ") + "  # the trailing comment of the target\n"
}

// unmanaged holds the shapes that moved or grew: a comment at column 0
// inside an item, and a |+ block scalar followed by a blank line and a
// comment.
const unmanaged = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
# a column-0 comment inside the Widget
spec:
  size: 1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: scripts
  namespace: gw
data:
  run.sh: |+
    echo hello

# after the script
`

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix) + "\n"
}

// asList makes a ResourceList of the documents, each item in kyaml's block
// layout; comment lines at column 0 stay there.
func asList(docs ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, d := range docs {
		for _, doc := range strings.Split("\n"+d, "\n---\n") {
			for i, line := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(doc, "\n"), "\n"), "\n") {
				switch {
				case i == 0:
					b.WriteString("- " + line + "\n")
				case line == "" || line[0] == '#':
					b.WriteString(line + "\n")
				default:
					b.WriteString("  " + line + "\n")
				}
			}
		}
	}
	b.WriteString("functionConfig:\n" + indent(commentPolicy, "  "))
	return b.String()
}

// checkComments asserts that text holds each comment once, in its place,
// and the script's value unchanged.
func checkComments(t *testing.T, text string, round int) {
	t.Helper()
	text = strings.ReplaceAll(text, "\r\n", "\n")
	require.Equal(t, 1, strings.Count(text, "# the trailing comment of the target"), "round %d:\n%s", round, text)
	require.Equal(t, 1, strings.Count(text, "# after the script"), "round %d", round)
	require.Regexp(t, regexp.MustCompile(`name: w\n\s*# a column-0 comment inside the Widget\n\s*spec:`), text, "round %d: the comment stays inside the Widget", round)
	require.Regexp(t, regexp.MustCompile(`run\.sh: \|\+\n\s+echo hello\n\n\s*# after the script\n`), text, "round %d: the kept block scalar gains no line", round)
}

// unmanagedInList is unmanaged as items of a list: the comment after the
// script is the item's own (in the file it ends the document; at column 0
// in a list it would head the next item).
const unmanagedInList = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
# a column-0 comment inside the Widget
spec:
  size: 1
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: scripts
  namespace: gw
data:
  run.sh: |+
    echo hello

  # after the script
`

func TestCommentsSurviveRendersInFunctionMode(t *testing.T) {
	for name, crlf := range map[string]bool{"fast path": false, "kyaml's reader": true} {
		t.Run(name, func(t *testing.T) {
			in := asList(caSecret("ca", "gw", "ca-2026"), targetWithFootComment(), unmanagedInList)
			for round, ca := range []string{"ca-2026", "signer-b-1", "ca-2026", "signer-b-1"} {
				in = strings.Replace(in, "  ca.crt: ", "  ca.crt: X", 1)
				in = regexp.MustCompile(`  ca\.crt: X\S*\n`).ReplaceAllString(in, "  ca.crt: "+base64.StdEncoding.EncodeToString(testpki.Fixture(ca).PEM())+"\n")
				if crlf {
					in = strings.ReplaceAll(in, "\n", "\r\n")
				}
				out, stderr, code := runIn(t, "", in)
				require.Equal(t, 0, code, stderr)
				require.Contains(t, out, indent(string(testpki.Fixture(ca).PEM()), "      "), "round %d: the target changed", round)
				checkComments(t, out, round)
				in = strings.ReplaceAll(out[:strings.Index(out, "\nresults:")+1], "\r\n", "\n")
			}
		})
	}
}

func TestCommentsSurviveRendersWithRender(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte("# local config\n"+commentPolicy), 0o644))
	pkg := filepath.Join(dir, "pkg")
	require.NoError(t, os.Mkdir(pkg, 0o755))
	// The target shares its file with the unmanaged resources.
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "trust.yaml"), []byte(unmanaged+"---\n"+targetWithFootComment()), 0o644))
	for round, ca := range []string{"ca-2026", "signer-b-1", "ca-2026", "signer-b-1"} {
		require.NoError(t, os.WriteFile(filepath.Join(pkg, "ca.yaml"), []byte(caSecret("ca", "gw", ca)), 0o644))
		_, stderr, code := runIn(t, dir, "", "render", "pkg", "--policy", "policy.yaml")
		require.Equal(t, 0, code, stderr)
		b, err := os.ReadFile(filepath.Join(pkg, "trust.yaml"))
		require.NoError(t, err)
		require.Contains(t, string(b), indent(string(testpki.Fixture(ca).PEM()), "    "), "round %d: the target changed", round)
		checkComments(t, string(b), round)
		require.True(t, strings.HasPrefix(string(b), unmanaged+"---\n"), "round %d: the unmanaged documents keep their bytes:\n%s", round, b)
	}
}
