package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// checkDir holds the golden cases of `check`: input.yaml is a template
// (testpki.TemplateFuncs), expected.txt/.json/.svg the outputs at
// checkNow. `make golden` (UPDATE_GOLDEN=1) rewrites them; review the diff.
var checkDir = golden.Path("testdata", "check")

const checkNow = "2026-11-22T00:00:00Z"

// runCLI runs the root command with args and stdin and returns stdout,
// stderr and the exit status main would use.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := newRootCommand(strings.NewReader(stdin), &out, &errb)
	cmd.SetArgs(args)
	code := run(cmd, &errb)
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

func checkGolden(t *testing.T, path, actual string) {
	t.Helper()
	golden.Check(t, path, []byte(actual))
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
	for _, c := range []struct {
		name string
		code int
		why  string
	}{
		{"rotation", 1, "an expired root and a machine inside fail-within must exit 1"},
		{"chains", 0, "nothing expires inside fail-within: certificates to re-issue are no failure of the gate"},
	} {
		in := expand(t, filepath.Join(checkDir, c.name, "input.yaml"))
		for _, tc := range []struct{ format, file string }{
			{"table", "expected.txt"},
			{"json", "expected.json"},
			{"svg", "expected.svg"},
		} {
			t.Run(c.name+"/"+tc.format, func(t *testing.T) {
				out, stderr, code := runCLI(t, in, "check", "-", "--now", checkNow, "-o", tc.format)
				checkGolden(t, filepath.Join(checkDir, c.name, tc.file), out)
				require.Equal(t, c.code, code, "%s; stderr: %s", c.why, stderr)
				requireNoKeyMaterial(t, out+stderr)
			})
		}
	}
}

// TestCheckInputShapes: a typed list is read like a List, the good
// certificate of a partly broken value is reported next to the problem,
// and text that mentions a PEM header is not certificate data. The
// unreadable value makes the exit 2, even with an expired root.
func TestCheckInputShapes(t *testing.T) {
	in := expand(t, filepath.Join(checkDir, "input-shapes", "input.yaml"))
	for _, tc := range []struct{ format, file string }{
		{"table", "expected.txt"},
		{"json", "expected.json"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			out, stderr, code := runCLI(t, in, "check", "-", "--now", checkNow, "-o", tc.format)
			checkGolden(t, filepath.Join(checkDir, "input-shapes", tc.file), out)
			require.Equal(t, 2, code, "unreadable certificate data is an input error; stderr: %s", stderr)
			require.Contains(t, stderr, "rotate-certs check: 1 value(s) hold certificate data that does not parse")
		})
	}
	out, _, _ := runCLI(t, in, "check", "-", "--now", checkNow, "-o", "json")
	s := parseJSON(t, out)
	require.Equal(t, 3, s.Summary.Certificates, "two from the SecretList, one from the partly broken bundle")
	require.Equal(t, 1, s.Summary.Expired)
	require.Len(t, s.Problems, 1)
	require.Equal(t, "data.ca-bundle.crt", s.Problems[0].Key, "README.md only mentions the header")
	require.Equal(t, "the 2nd PEM block (line 11) is malformed: its END line is missing or misspelt", s.Problems[0].Message)
}

// TestCheckDuplicateKeys: two manifests concatenated without "---" make
// one document with every key twice; kyaml would keep the first values and
// hide the second Secret's expired CA. check names the file, the line and
// the key, reads nothing of that file, and exits 2.
func TestCheckDuplicateKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "concatenated.yaml")
	require.NoError(t, os.WriteFile(path, []byte(secret(t, "fresh", "ca-2026")+secret(t, "old", "ca-expired")), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte(secret(t, "other", "ca-2027")), 0o644))
	for _, tc := range []struct {
		name, stdin string
		args        []string
		where       string
	}{
		{"a file in a directory", "", []string{dir}, path + ":8:"},
		{"stdin", secret(t, "fresh", "ca-2026") + secret(t, "old", "ca-expired"), []string{"-"}, "stdin:8:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, tc.stdin, append([]string{"check", "--now", checkNow, "-o", "json"}, tc.args...)...)
			require.Equal(t, 2, code, "stderr: %s", stderr)
			require.Contains(t, stderr, "rotate-certs check: "+tc.where+` mapping key "apiVersion" already defined at line 1 (a missing --- between two documents?); 3 more duplicate key(s) in the file`)
			var names []string
			for _, e := range parseJSON(t, out).Entries {
				names = append(names, e.Resource.Name)
			}
			if tc.stdin == "" {
				require.Equal(t, []string{"other"}, names, "the other files are still reported")
			} else {
				require.Empty(t, names)
			}
		})
	}
}

// TestCheckReadsEachFileOnce: a file named and also inside a directory
// named is listed once.
func TestCheckReadsEachFileOnce(t *testing.T) {
	dir := t.TempDir()
	leaf := filepath.Join(dir, "leaf.yaml")
	require.NoError(t, os.WriteFile(leaf, []byte(secret(t, "leaf", "leaf-new")), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.yaml"), []byte(secret(t, "ca", "ca-2026")), 0o644))
	out, stderr, code := runCLI(t, "", "check", dir, leaf, filepath.Join(dir, ".", "leaf.yaml"), "--now", checkNow, "-o", "json")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 2, parseJSON(t, out).Summary.Certificates)
}

// TestExampleTimeline keeps the example of docs/reference/check.md current: the committed
// manifests are the expanded golden input, the SVG its timeline. They are
// files in examples/, not a directory: every directory there is a
// renderable kpt/kustomize example package that the end-to-end tests run
// on the wall clock, and this snapshot is pinned to checkNow.
func TestExampleTimeline(t *testing.T) {
	in := expand(t, filepath.Join(checkDir, "rotation", "input.yaml"))
	checkGolden(t, golden.Path("examples", "report-manifests.yaml"), in)
	out, _, code := runCLI(t, "", "check", golden.Path("examples", "report-manifests.yaml"), "--now", checkNow, "-o", "svg")
	require.Equal(t, 1, code)
	checkGolden(t, golden.Path("examples", "report-timeline.svg"), out)
}

// secret returns a Secret manifest whose data.ca.crt holds the fixtures.
func secret(t *testing.T, name string, fixtures ...string) string {
	t.Helper()
	quoted := make([]string, len(fixtures))
	for i, f := range fixtures {
		quoted[i] = `"` + f + `"`
	}
	b, err := testpki.ExpandTemplate(name, `apiVersion: v1
kind: Secret
metadata:
  name: `+name+`
  namespace: default
data:
  ca.crt: {{b64 `+strings.Join(quoted, " ")+`}}
`)
	require.NoError(t, err)
	return string(b)
}

type checkSummary struct {
	Failing bool `json:"failing"`
	Summary struct {
		Certificates, Expiries, OK, Warn, Fail, Expired, Problems, Reissues int
	} `json:"summary"`
	Entries []struct {
		Resource struct{ Name, File string } `json:"resource"`
		Status   string                      `json:"status"`
	} `json:"entries"`
	Problems []struct {
		Key     string `json:"key"`
		Message string `json:"message"`
	} `json:"problems"`
}

func parseJSON(t *testing.T, out string) checkSummary {
	t.Helper()
	var s checkSummary
	require.NoError(t, json.Unmarshal([]byte(out), &s), "output is not the JSON report:\n%s", out)
	return s
}

// TestCheckExitCodes drives each threshold case at checkNow
// (2026-11-22): ca-expiring expires 2026-12-10, exactly 18 days later.
func TestCheckExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		input  string
		args   []string
		code   int
		status string
	}{
		{"ok", secret(t, "fresh", "ca-2026"), nil, 0, "ok"},
		{"warn does not fail", secret(t, "soon", "ca-expiring"), nil, 0, "warn"},
		{"inside fail-within", secret(t, "soon", "ca-expiring"), []string{"--fail-within", "20d"}, 1, "fail"},
		{"exactly at fail-within fails", secret(t, "soon", "ca-expiring"), []string{"--fail-within", "432h"}, 1, "fail"},
		{"a second outside fail-within", secret(t, "soon", "ca-expiring"), []string{"--fail-within", "431h59m59s"}, 0, "warn"},
		{"outside warn-within", secret(t, "soon", "ca-expiring"), []string{"--warn-within", "17d", "--fail-within", "7d"}, 0, "ok"},
		{"expired", secret(t, "old", "ca-expired"), nil, 1, "expired"},
		{"expired even with zero thresholds", secret(t, "old", "ca-expired"), []string{"--warn-within", "0s", "--fail-within", "0s"}, 1, "expired"},
		{"now moves the clock", secret(t, "fresh", "ca-2026"), []string{"--now", "2028-10-30"}, 1, "fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"check", "-", "-o", "json"}, tc.args...)
			if !contains(tc.args, "--now") {
				args = append(args, "--now", checkNow)
			}
			out, stderr, code := runCLI(t, tc.input, args...)
			require.Equal(t, tc.code, code, "stderr: %s", stderr)
			s := parseJSON(t, out)
			require.Len(t, s.Entries, 1)
			require.Equal(t, tc.status, s.Entries[0].Status)
			require.Equal(t, tc.code == 1, s.Failing)
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestCheckUsageErrors(t *testing.T) {
	in := secret(t, "fresh", "ca-2026")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown output", []string{"-o", "xml"}, `-o "xml"`},
		{"bad duration", []string{"--fail-within", "soon"}, "--fail-within"},
		{"negative duration", []string{"--warn-within", "-1h"}, "--warn-within"},
		{"days that wrap negative", []string{"--warn-within", "9999999999999d"}, `--warn-within "9999999999999d": duration "9999999999999d" is out of range`},
		{"days that wrap to one day", []string{"--fail-within", "281474976710657d"}, "--fail-within"},
		{"fail longer than warn", []string{"--fail-within", "40d"}, "longer than --warn-within"},
		{"bad now", []string{"--now", "tomorrow"}, "--now"},
		{"unknown flag", []string{"--frobnicate"}, "unknown flag"},
		{"missing path", []string{"/nonexistent/manifests"}, "/nonexistent/manifests"},
		{"stdin twice", []string{"-"}, "stdin can be read only once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, in, append([]string{"check", "-", "--now", checkNow}, tc.args...)...)
			require.Equal(t, 2, code, "stdout: %s stderr: %s", out, stderr)
			require.Contains(t, stderr, tc.want)
		})
	}
	t.Run("not YAML", func(t *testing.T) {
		_, stderr, code := runCLI(t, "a: [unclosed", "check", "-", "--now", checkNow)
		require.Equal(t, 2, code)
		require.Contains(t, stderr, "stdin: not valid YAML")
	})
	t.Run("help documents the exit codes", func(t *testing.T) {
		out, _, code := runCLI(t, "", "check", "--help")
		require.Equal(t, 0, code)
		for _, s := range []string{"Exit status:", "0  nothing is inside --fail-within", "1  a certificate", "2  usage or input error"} {
			require.Contains(t, out, s)
		}
	})
}

// TestCheckValues covers what is and is not certificate data: a public
// and a private key are ignored, a malformed certificate is reported,
// counted and exits 2, and no key is ever printed.
func TestCheckValues(t *testing.T) {
	in, err := testpki.ExpandTemplate("values", `apiVersion: v1
kind: Secret
metadata: {name: keys-only, namespace: default}
type: kubernetes.io/tls
stringData:
  signing.pub: |
    -----BEGIN PUBLIC KEY-----
    MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=
    -----END PUBLIC KEY-----
  tls.key: |
    {{key 4 "leaf-old"}}
  notes: "-----BEGIN PGP SIGNATURE----- not ours"
---
apiVersion: v1
kind: Secret
metadata: {name: serving, namespace: default}
type: kubernetes.io/tls
data:
  tls.crt: {{b64 "leaf-new"}}
  tls.key: {{keyb64 "leaf-new"}}
`)
	require.NoError(t, err)
	broken := `---
apiVersion: v1
kind: Secret
metadata: {name: broken, namespace: default}
stringData:
  ca.crt: |
    -----BEGIN CERTIFICATE-----
    MIIBnotacertificateatall==
    -----END CERTIFICATE-----
`
	t.Run("non-certificate PEM is ignored", func(t *testing.T) {
		out, stderr, code := runCLI(t, string(in), "check", "-", "--now", checkNow, "-o", "json")
		require.Equal(t, 0, code, stderr)
		s := parseJSON(t, out)
		require.Equal(t, 1, s.Summary.Certificates, "only serving's tls.crt is a certificate")
		require.Zero(t, s.Summary.Problems)
		requireNoKeyMaterial(t, out+stderr)
	})
	for _, format := range []string{"table", "json", "svg"} {
		t.Run("malformed certificate is reported and counted/"+format, func(t *testing.T) {
			out, stderr, code := runCLI(t, string(in)+broken, "check", "-", "--now", checkNow, "-o", format)
			require.Equal(t, 2, code, "unreadable certificate data is an input error")
			require.Contains(t, stderr, "1 value(s) hold certificate data that does not parse")
			requireNoKeyMaterial(t, out+stderr)
			switch format {
			case "json":
				s := parseJSON(t, out)
				require.Equal(t, 1, s.Summary.Problems)
				require.Len(t, s.Problems, 1)
				require.Equal(t, "stringData.ca.crt", s.Problems[0].Key)
			case "table":
				require.Contains(t, out, "Unreadable certificate data:\n  Secret default/broken stringData.ca.crt: ")
				require.Contains(t, out, "; 1 unreadable;")
			}
		})
	}
}

// TestCheckDirectoryWalk reads a tree: nested directories, .yaml, .yml and
// .json files, multi-document files and a kubectl List; hidden directories
// and other extensions are skipped. Resources carry their file.
func TestCheckDirectoryWalk(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("a.yaml", secret(t, "one", "ca-2026")+"---\n"+secret(t, "two", "ca-2025"))
	write("nested/deeper/b.yml", secret(t, "three", "ca-2027"))
	list := "apiVersion: v1\nkind: List\nitems:\n"
	for _, n := range []string{"four", "five"} {
		list += "- " + strings.ReplaceAll(strings.TrimSpace(secret(t, n, "signer-a-2")), "\n", "\n  ") + "\n"
	}
	write("nested/list.yaml", "# a kubectl get -o yaml dump next to another document\n"+list+"---\n"+secret(t, "six", "signer-b-1"))
	write("c.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"seven","namespace":"default"},"data":{"ca.crt":`+
		strconvQuote(string(testpki.Fixture("signer-a-1").PEM()))+`}}`)
	write(".git/ignored.yaml", secret(t, "hidden", "ca-expired"))
	write("README.md", secret(t, "markdown", "ca-expired"))

	out, stderr, code := runCLI(t, "", "check", dir, "--now", checkNow, "-o", "json")
	require.Equal(t, 0, code, "the expired certificates live only in skipped files; stderr: %s", stderr)
	s := parseJSON(t, out)
	var names []string
	files := map[string]string{}
	for _, e := range s.Entries {
		names = append(names, e.Resource.Name)
		files[e.Resource.Name] = e.Resource.File
	}
	require.ElementsMatch(t, []string{"one", "two", "three", "four", "five", "six", "seven"}, names)
	require.Equal(t, filepath.Join(dir, "nested", "deeper", "b.yml"), files["three"])
	require.Equal(t, filepath.Join(dir, "nested", "list.yaml"), files["four"])

	// Files and stdin together.
	out, _, code = runCLI(t, secret(t, "piped", "ca-expired"), "check", filepath.Join(dir, "a.yaml"), "-", "--now", checkNow, "-o", "json")
	require.Equal(t, 1, code)
	require.Equal(t, 3, parseJSON(t, out).Summary.Certificates)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestCheckSVG parses the timeline as XML, counts one bar per certificate
// and one diamond per reported expiry, and renders it to PNG.
func TestCheckSVG(t *testing.T) {
	in := expand(t, filepath.Join(checkDir, "rotation", "input.yaml"))
	out, _, _ := runCLI(t, in, "check", "-", "--now", checkNow, "-o", "svg")
	js, _, _ := runCLI(t, in, "check", "-", "--now", checkNow, "-o", "json")
	s := parseJSON(t, js)
	svg := parseSVG(t, out)
	// A fail zone of 7 days on a window of years is drawn wide enough to
	// see, and says when it ends; each re-issue marker carries its date.
	w, err := strconv.ParseFloat(svg.failZoneWidth, 64)
	require.NoError(t, err)
	require.GreaterOrEqual(t, w, 6.0, "the fail zone is visible")
	texts, counts := svg.texts, svg.counts
	require.Equal(t, []string{"fail zone to 2026-11-29 (7d)"}, texts["zone-fail-label"])
	// ca-2025 was retired on 2026-11-01 (the target's record); retain.for
	// (90 days) runs out on 2027-01-30.
	require.Equal(t, []string{"re-issue by 2027-01-30", "re-issue by 2027-01-30"}, texts["reissue-date"])
	require.Equal(t, "http://www.w3.org/2000/svg svg", svg.root)
	require.Equal(t, s.Summary.Certificates, counts["rect.bar"], "one bar per certificate")
	require.Equal(t, 10, counts["rect.bar"])
	require.Equal(t, s.Summary.Expiries, counts["path.expiry"], "one diamond per reported expiry")
	require.Equal(t, 1, counts["line.today"])
	require.Equal(t, 1, counts["rect.zone-fail"])
	require.Equal(t, 1, counts["rect.zone-warn"])
	require.Equal(t, 1, counts["rect.overlap"], "the trust bundle's old and new CA overlap")
	require.Equal(t, s.Summary.Reissues, counts["path.reissue"])

	requireRendersToPNG(t, out)
}

// svgSummary is what TestCheckSVG reads of a timeline: the root element,
// the count of each element.class, the text of each classed <text>, and
// the fail zone's width.
type svgSummary struct {
	root, failZoneWidth string
	counts              map[string]int
	texts               map[string][]string
}

// parseSVG reads out as XML, failing the test when it is not well-formed.
func parseSVG(t *testing.T, out string) svgSummary {
	t.Helper()
	sum := svgSummary{counts: map[string]int{}, texts: map[string][]string{}}
	counts, texts := sum.counts, sum.texts
	var failZoneWidth, root, inText string
	dec := xml.NewDecoder(strings.NewReader(out))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the SVG is not well-formed XML")
		switch se := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = se.Name.Space + " " + se.Name.Local
			}
			class, width := "", ""
			for _, a := range se.Attr {
				switch a.Name.Local {
				case "class":
					class = a.Value
					counts[se.Name.Local+"."+a.Value]++
				case "width":
					width = a.Value
				}
			}
			if class == "zone-fail" {
				failZoneWidth = width
			}
			if se.Name.Local == "text" {
				inText = class
			}
		case xml.CharData:
			if inText != "" {
				texts[inText] = append(texts[inText], string(se))
			}
		case xml.EndElement:
			inText = ""
		}
	}
	sum.root, sum.failZoneWidth = root, failZoneWidth
	return sum
}

// requireRendersToPNG renders the SVG with the real rsvg-convert and
// checks the picture is the timeline's size and not blank.
func requireRendersToPNG(t *testing.T, out string) {
	t.Helper()
	bin, err := exec.LookPath("rsvg-convert")
	if err != nil {
		t.Skip("rsvg-convert not found: install the Debian package librsvg2-bin (make test-tools does when it can) to render the SVG")
	}
	svgPath := filepath.Join(t.TempDir(), "timeline.svg")
	pngPath := filepath.Join(t.TempDir(), "timeline.png")
	require.NoError(t, os.WriteFile(svgPath, []byte(out), 0o644))
	msg, err := exec.Command(bin, "-o", pngPath, svgPath).CombinedOutput()
	require.NoError(t, err, "rsvg-convert: %s", msg)
	f, err := os.Open(pngPath)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err, "rsvg-convert did not write a PNG")
	require.Equal(t, 1100, img.Bounds().Dx())
	require.Greater(t, img.Bounds().Dy(), 300)
	// Not blank: the today line's red is somewhere in the picture.
	colours := map[[3]uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 3 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 3 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	require.Greater(t, len(colours), 20, "the PNG looks blank")
}

// TestCheckWaves: a roll-out in waves that is not done is listed, wave by
// wave, with when each is due, what it rolls and until when the bundle
// keeps its previous CA.
func TestCheckWaves(t *testing.T) {
	in := expand(t, filepath.Join(checkDir, "waves", "input.yaml"))
	for _, tc := range []struct{ format, file, wave2 string }{
		{"table", "expected.txt", "gateway  2/3   2026-11-23  due: render"},
		{"json", "expected.json", `"wave": 2`},
	} {
		t.Run(tc.format, func(t *testing.T) {
			out, stderr, code := runCLI(t, in, "check", "-", "--now", "2026-11-23T06:00:00Z", "-o", tc.format)
			checkGolden(t, filepath.Join(checkDir, "waves", tc.file), out)
			require.Equal(t, 0, code, "pending waves fail nothing; stderr: %s", stderr)
			require.Contains(t, out, tc.wave2)
		})
	}
}

// TestCheckRenewals: the cert-manager CA Certificates that write a bundle's
// sources are listed with their renewal date, state and key change, in the
// table and in -o json; renewals fail nothing.
func TestCheckRenewals(t *testing.T) {
	in := expand(t, filepath.Join(checkDir, "renewals", "input.yaml"))
	for _, tc := range []struct {
		format, file string
		want         []string
	}{
		{"table", "expected.txt", []string{"cert-manager renewals of the CAs the bundles read",
			"Certificate cert-manager/root-ca    platform  2026-11-28  due soon  new",
			"Certificate cert-manager/next-ca    platform  2028-09-18  later     same",
			"Certificate cert-manager/legacy-ca  platform  never       disabled  -"}},
		{"json", "expected.json", []string{`"renewals": [`, `"renewsAt": "2026-11-28T00:00:00Z"`, `"state": "due soon"`, `"newKey": true`}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			out, stderr, code := runCLI(t, in, "check", "-", "--now", checkNow, "-o", tc.format)
			checkGolden(t, filepath.Join(checkDir, "renewals", tc.file), out)
			require.Equal(t, 0, code, "a renewal fails nothing; stderr: %s", stderr)
			for _, w := range tc.want {
				require.Contains(t, out, w)
			}
		})
	}
	// Past its date the cluster likely holds a new CA already.
	out, _, _ := runCLI(t, in, "check", "-", "--now", "2026-12-01T00:00:00Z")
	require.Contains(t, out, "past: snapshot and render")
}
