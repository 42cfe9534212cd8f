package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/check"
	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// domainStep is one day of a rotation across the packages of a trust
// domain: files replaced (by path, with the template of their new text),
// then a render of sub (a package directory, or "" for the repository's
// top) at a time. Its golden file holds the render's stdout and stderr and
// every trust target of the repository after it.
type domainStep struct {
	name    string
	replace map[string]string
	sub     string
	at      string
}

// reissued is an identity issuer Secret holding fixture issuer.
func reissued(issuer string) string {
	return "kind: Secret\napiVersion: v1\nmetadata:\n  name: linkerd-identity-issuer\n  namespace: linkerd\ndata:\n  crt.pem: {{b64 \"" + issuer + "\"}}\n"
}

// TestDomainEastWest walks the rotation of an anchor two clusters of a mesh
// share (testdata/domains/east-west: east and west, one package each, one
// domain). The new anchor is in both sources; east's issuer is re-issued
// on the 22nd, west's on the 24th, retain.dropUnusedAfter is 24h. Seen from
// the repository's top the old anchor stays in both bundles while west's
// issuer needs it, though nothing in east does, and leaves both once
// nothing in either cluster chains to it; east rendered alone warns that it
// does not see the domain and keeps the old anchor.
func TestDomainEastWest(t *testing.T) {
	steps := []domainStep{
		{name: "1-rotate", at: "2026-11-21T00:00:00Z"},
		{name: "2-east-reissued", at: "2026-11-22T12:00:00Z", replace: map[string]string{"east/identity-issuer.yaml": reissued("linkerd-issuer-new")}},
		{name: "3-east-alone", at: "2026-11-23T12:00:00Z", sub: "east"},
		{name: "4-west-reissued", at: "2026-11-24T12:00:00Z", replace: map[string]string{"west/identity-issuer.yaml": reissued("linkerd-west-issuer-new")}},
		{name: "5-a-day-later", at: "2026-11-25T13:00:00Z"},
	}
	runDomainSteps(t, "east-west", steps)
}

// runDomainSteps expands testdata/domains/NAME into a git work tree's top
// and runs steps over it in order, each checked against its golden file.
func runDomainSteps(t *testing.T, name string, steps []domainStep) {
	src := golden.Path("testdata", "domains", name)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755), "the top of a work tree")
	require.NoError(t, fs.WalkDir(os.DirFS(src), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".golden") {
			return err
		}
		text, err := os.ReadFile(filepath.Join(src, p))
		if err != nil {
			return err
		}
		return writeTemplate(dir, p, string(text))
	}))
	for _, s := range steps {
		for p, text := range s.replace {
			require.NoError(t, writeTemplate(dir, p, text))
		}
		at, err := time.Parse(time.RFC3339, s.at)
		require.NoError(t, err)
		var stdout, stderr bytes.Buffer
		code := renderCode(filepath.Join(dir, s.sub), Options{At: at, Stdout: &stdout}, &stderr)
		got := fmt.Sprintf("# render %s at %s: exit %d\n## stdout\n%s## stderr\n%s", "./"+s.sub, s.at, code, stdout.String(), stderr.String())
		for _, c := range []string{"east", "west"} {
			b, err := os.ReadFile(filepath.Join(dir, c, "identity-trust-roots.yaml"))
			require.NoError(t, err)
			got += "## " + c + "/identity-trust-roots.yaml\n" + string(b)
		}
		got += checkDomains(t, dir, s.sub, at)
		golden.Check(t, filepath.Join(src, s.name+".golden"), []byte(strings.ReplaceAll(got, dir, "$REPO")))
	}
}

// writeTemplate writes the expansion of template text to dir/p.
func writeTemplate(dir, p, text string) error {
	out, err := testpki.ExpandTemplate(p, text)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// renderCode renders as the command does: errors printed on stderr, and
// the exit status.
func renderCode(dir string, o Options, stderr io.Writer) int {
	o.Stderr = exit.NewPrinter(stderr, "rotate-certs render")
	err := Render(dir, o)
	if err != nil {
		o.Stderr.Error(err)
	}
	return int(exit.CodeOf(err))
}

// TestDomainRetainMustAgree: two bundles of one domain that keep previous
// CAs by different rules are an error naming both policies, and nothing
// is written.
func TestDomainRetainMustAgree(t *testing.T) {
	src := golden.Path("testdata", "domains", "east-west")
	dir := t.TempDir()
	for _, p := range []string{"east/rotation-policy.yaml", "east/trust-anchor.yaml", "east/identity-trust-roots.yaml", "west/trust-anchor.yaml", "west/identity-trust-roots.yaml"} {
		text, err := os.ReadFile(filepath.Join(src, p))
		require.NoError(t, err)
		require.NoError(t, writeTemplate(dir, p, string(text)))
	}
	text, err := os.ReadFile(filepath.Join(src, "west/rotation-policy.yaml"))
	require.NoError(t, err)
	require.NoError(t, writeTemplate(dir, "west/rotation-policy.yaml", strings.Replace(string(text), "dropUnusedAfter: 24h", "dropUnusedAfter: 72h", 1)))
	before, err := os.ReadFile(filepath.Join(dir, "east/identity-trust-roots.yaml"))
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 1, renderCode(dir, Options{At: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC), Stdout: &stdout}, &stderr))
	require.Contains(t, stderr.String(), `trust domain "mesh-anchors": bundle "linkerd-anchors" of policy linkerd-trust in package east sets retain {maxPrevious: 1, protectIssuers: true, dropUnusedAfter: 24h0m0s}, but bundle "linkerd-anchors" of policy linkerd-trust in package west sets retain {maxPrevious: 1, protectIssuers: true, dropUnusedAfter: 72h0m0s}`)
	require.Empty(t, stdout.String())
	after, err := os.ReadFile(filepath.Join(dir, "east/identity-trust-roots.yaml"))
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "nothing is written")
}

// checkDomains is what check says of the domains of sub (of the
// repository dir, where it runs) at now: the table's domain sections and
// the JSON's domains.
func checkDomains(t *testing.T, dir, sub string, now time.Time) string {
	t.Chdir(dir)
	var table, js, stderr bytes.Buffer
	_ = check.Run(check.Options{Paths: []string{"./" + sub}, Now: now, Format: "table"}, &table, exit.NewPrinter(&stderr, "check"))
	_ = check.Run(check.Options{Paths: []string{"./" + sub}, Now: now, Format: "json"}, &js, exit.NewPrinter(io.Discard, "check"))
	text := table.String()
	start, end := strings.Index(text, "\nTrust domains"), strings.Index(text, "\nTrust (why")
	require.True(t, start >= 0 && end > start, text)
	var doc struct {
		Domains json.RawMessage `json:"domains"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, doc.Domains, "", "  "))
	return "## check (table, domains)" + text[start:end] + "## check -o json (domains)\n" + pretty.String() + "\n## check stderr\n" + stderr.String()
}
