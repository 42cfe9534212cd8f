package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// check lists a certificate block that encoding/pem would skip (a damaged
// body line in the middle of a bundle) as a problem row naming the block,
// next to the certificates that read, and exits 2; it exited 0.
func TestCheckReportsABrokenBlockBetweenGoodOnes(t *testing.T) {
	second := strings.SplitAfter(string(testpki.Fixture("ca-2027").PEM()), "\n")
	second[2] = "!!" + second[2][2:]
	value := string(testpki.Fixture("ca-2026").PEM()) + strings.Join(second, "") + string(testpki.Fixture("signer-b-1").PEM())
	in := "apiVersion: v1\nkind: Secret\nmetadata: {name: roots, namespace: default}\ndata:\n  ca.crt: " + base64.StdEncoding.EncodeToString([]byte(value)) + "\n"
	out, stderr, code := runCLI(t, in, "check", "-", "--now", checkNow)
	require.Equal(t, 2, code, "stderr: %s", stderr)
	require.Contains(t, out, "Secret default/roots data.ca.crt: the 2nd PEM block (line 11) is malformed: its body is not valid base64")
	require.Contains(t, out, "2 certificate(s)")
	require.Contains(t, stderr, "rotate-certs check: 1 value(s) hold certificate data that does not parse")
}

// mutations returns, for every distinct field path of the golden inputs
// (the first input that has it), the input with the value at that path
// replaced by each of with: the hostile-input tests below feed every
// position a value of the wrong shape or key material.
func mutations(t *testing.T, with []*yaml.Node) []mutation {
	t.Helper()
	paths, err := filepath.Glob(golden.Path("testdata", "golden", "*", "input.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	seen := map[string]bool{}
	var out []mutation
	for _, path := range paths {
		text, err := os.ReadFile(path)
		require.NoError(t, err)
		in, err := testpki.ExpandTemplate(filepath.Dir(path), string(text))
		require.NoError(t, err)
		root, err := yaml.Parse(string(in))
		require.NoError(t, err)
		var walk func(n *yaml.Node, at string)
		walk = func(n *yaml.Node, at string) {
			var slots []int
			var names []string
			switch n.Kind {
			case yaml.MappingNode:
				for i := 1; i < len(n.Content); i += 2 {
					slots, names = append(slots, i), append(names, at+"."+n.Content[i-1].Value)
				}
			case yaml.SequenceNode:
				for i := range n.Content {
					slots, names = append(slots, i), append(names, at+"[]")
				}
			}
			for j, i := range slots {
				for k, w := range with {
					key := fmt.Sprintf("%d %s", k, names[j])
					if seen[key] {
						continue
					}
					seen[key] = true
					old := n.Content[i]
					n.Content[i] = w
					text, err := root.String()
					n.Content[i] = old
					require.NoError(t, err)
					out = append(out, mutation{path: names[j], with: k, input: text})
				}
				walk(n.Content[i], names[j])
			}
		}
		walk(root.YNode(), "")
	}
	return out
}

type mutation struct {
	path  string // the field path, lists as []
	with  int    // the index of the value put there
	input string
}

// Every message names the field and the kind of value, never its content:
// a private key pasted where an object, a name, a duration, an annotation
// or a whole item is expected was quoted back (`must be an object, got
// string "-----BEGIN PRIVATE KEY-----..."`, kyaml's "node contents",
// `has apiVersion %q`). The key goes into every position of every golden
// input in turn, also a list where a map is expected and a number too
// large for a duration; function mode, check (table and JSON) and init
// must neither panic nor repeat the key in a result, on stderr or in their
// report.
func TestNoMessageRepeatsKeyMaterial(t *testing.T) {
	key := string(testpki.Fixture("ca-2026").KeyPEM())
	body := strings.Split(key, "\n")[1] // the first line of the key's base64
	str := func(s string, style yaml.Style) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: style}
	}
	with := []*yaml.Node{
		str(key, yaml.LiteralStyle),
		str(strings.ReplaceAll(key, "\n", " "), 0), // one line
		{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{str("x", 0)}},
		{Kind: yaml.ScalarNode, Tag: "!!int", Value: "9223372036854775807"},
	}
	modes := [][]string{
		nil, // function mode
		{"check", "-", "--now", "2026-11-22"},
		{"check", "-", "--now", "2026-11-22", "-o", "json"},
		{"init", "-"},
	}
	runs := 0
	for _, m := range mutations(t, with) {
		for _, args := range modes {
			runs++
			out, stderr := runNoPanic(t, m, args)
			what := stderr + "\n" + out
			switch {
			case args == nil:
				// Function mode passes the list's envelope, items and
				// functionConfig through (and the function writes what
				// the policy says into its targets): the rest - results,
				// and anything that is not YAML - may not hold the key.
				what = stderr + "\n" + notEchoed(out)
			}
			for _, secret := range []string{"PRIVATE KEY", body, body[:20]} {
				if i := strings.Index(what, secret); i >= 0 {
					t.Errorf("%s with value %d, %v: the output repeats the key: %q", m.path, m.with, args, what[max(0, i-120):min(len(what), i+60)])
					break
				}
			}
		}
	}
	t.Logf("%d runs", runs)
}

// notEchoed returns function mode's raw output without the top-level
// fields that repeat the input - apiVersion, kind, items and
// functionConfig - cut at the lines at column 0 that are no list entry,
// comment or blank line: results, and whatever is not YAML at all.
func notEchoed(out string) string {
	var rest strings.Builder
	echoed := false
	for _, line := range strings.SplitAfter(out, "\n") {
		if line != "" && !strings.ContainsAny(line[:1], " \t-#\r\n") {
			key, _, _ := strings.Cut(line, ":")
			echoed = key == "apiVersion" || key == "kind" || key == "items" || key == "functionConfig"
		}
		if !echoed {
			rest.WriteString(line)
		}
	}
	return rest.String()
}

// runNoPanic runs rotate-certs with args (none: function mode) on the
// mutated input in-process and fails the test, naming the mutation, if it
// panics.
func runNoPanic(t *testing.T, m mutation, args []string) (stdout, stderr string) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s with value %d, %v: panic: %v\n%s", m.path, m.with, args, p, debug.Stack())
		}
	}()
	stdout, stderr, _ = runCLI(t, m.input, args...)
	return stdout, stderr
}

const listHead = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata: {name: p}\n  spec: {}\n"

// items that is not a list was read as an empty list (exit 0, no items
// out: every resource of the package gone); it is an error naming items.
func TestItemsThatIsNotAListIsAnError(t *testing.T) {
	for i, in := range []string{
		listHead + "items: 5\n",
		listHead + "items: x\n",
		listHead + "items: {a: b}\n",
		listHead + "items: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n",
		`{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": 5, "functionConfig": {"apiVersion": "rotate-certs.dev/v1alpha1", "kind": "RotationPolicy", "metadata": {"name": "p"}, "spec": {}}}`,
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			out, stderr, code := runCLI(t, in)
			require.Equal(t, 1, code, "stdout: %s stderr: %s", out, stderr)
			require.Contains(t, stderr, "items")
			require.Contains(t, stderr, "not a list")
			require.NotContains(t, out, "kind: ConfigMap")
		})
	}
	out, stderr, code := runCLI(t, listHead+"items: []\n")
	require.Equal(t, 0, code, "an empty list is a list: %s", stderr)
	require.Contains(t, out, "items: []")
	_, stderr, code = runCLI(t, listHead)
	require.Equal(t, 0, code, "no items at all is no items: %s", stderr)
}

// A mapping that defines a key twice (kyaml keeps the first value, so the
// function would render what the input does not say) is an error in
// function mode as in render: in an item the function reads, on the fast
// path and on kyaml's, and in the policy. An item the function does not
// read passes through as written, as every such item does.
func TestDuplicateKeysInFunctionMode(t *testing.T) {
	dup := listHead + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c, namespace: ns}\n  data:\n    x: \"1\"\n    x: \"2\"\n"
	for name, in := range map[string]string{
		"fast path":          dup,
		"kyaml's reader":     strings.ReplaceAll(dup, "\n", "\r\n"),
		"flow style":         listHead + "items:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}, data: {x: \"1\", x: \"2\"}}\n",
		"top level of item":  listHead + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c, namespace: ns}\n  data: {x: \"1\"}\n  data: {x: \"2\"}\n",
		"in the policy":      strings.Replace(listHead, "  spec: {}\n", "  spec: {}\n  spec: {trustBundles: []}\n", 1) + "items: []\n",
		"in the policy data": strings.Replace(listHead, "  spec: {}\n", "  spec:\n    expiry: {warnWithin: 1h, warnWithin: 2h}\n", 1) + "items: []\n",
	} {
		t.Run(name, func(t *testing.T) {
			out, stderr, code := runCLI(t, in)
			require.Equal(t, 1, code, "stdout: %s stderr: %s", out, stderr)
			require.Contains(t, stderr, "is defined twice")
			require.Contains(t, out, "items: []", "no output resources")
		})
	}
	t.Run("an item the function does not read", func(t *testing.T) {
		in := listHead + "items:\n- apiVersion: example.com/v1\n  kind: Widget\n  metadata: {name: w}\n  spec: {a: 1, a: 2}\n"
		out, stderr, code := runCLI(t, in)
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, "spec: {a: 1, a: 2}")
	})
}

// snapshot printed a skipped object's apiVersion as written: an apiVersion
// holding a private key block was echoed whole on stderr (its kind was
// shown described). It is described too, and so is a kind or apiVersion
// in the error of an object that is not an object's shape.
func TestSnapshotDoesNotEchoAPIVersion(t *testing.T) {
	key := string(testpki.Fixture("ca-2026").KeyPEM())
	body := strings.Split(key, "\n")[1]
	field := func(s string) string { return strconv.Quote(s) }
	for name, in := range map[string]string{
		"skipped":      "apiVersion: " + field(key) + "\nkind: Secret\nmetadata: {name: s, namespace: n}\n",
		"skipped kind": "apiVersion: " + field(key) + "\nkind: " + field(key) + "\nmetadata: {name: s, namespace: n}\n",
		"bad shape":    "apiVersion: " + field(key) + "\nkind: " + field(key) + "\nmetadata: [x]\n",
	} {
		t.Run(name, func(t *testing.T) {
			out, stderr, code := runCLI(t, in, "snapshot", "-")
			require.NotZero(t, code)
			for _, secret := range []string{"PRIVATE KEY", body} {
				require.NotContains(t, stderr+out, secret)
			}
		})
	}
}

// keyMaterial is a private key in one of the forms a user could paste
// into a manifest: PEM of each key type, and the base64 of a DER key.
type keyMaterial struct {
	name  string
	value string
}

// keyMaterials returns an RSA (PKCS#1), an EC (SEC 1) and a PKCS#8 key
// as PEM, and the RSA key's DER as base64.
func keyMaterials(t *testing.T) []keyMaterial {
	t.Helper()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecDER, err := x509.MarshalECPrivateKey(ecKey)
	require.NoError(t, err)
	rsaDER := x509.MarshalPKCS1PrivateKey(rsaKey)
	return []keyMaterial{
		{"RSA PEM", string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: rsaDER}))},
		{"EC PEM", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}))},
		{"PKCS8 PEM", string(testpki.Fixture("ca-2026").KeyPEM())},
		{"base64 DER", base64.StdEncoding.EncodeToString(rsaDER)},
	}
}

// needles are what of k no output may hold: the words of a PEM key's
// armour and two runs of its encoded bytes, past the DER header that
// every key of a type shares. For a file name, k is written as base64url
// on one line (a file name holds no slash).
func (k keyMaterial) needles() []string {
	body := k.value
	if i := strings.Index(body, "-----\n"); i >= 0 {
		body = body[i+len("-----\n"):]
	}
	return []string{"PRIVATE KEY", "-----BEGIN", body[16:40], body[40:64]}
}

// fileName is k as the name of a YAML file: one line, no slash, at most
// 255 bytes.
func (k keyMaterial) fileName() string {
	s := strings.NewReplacer("\n", "", "/", "_", "+", "-").Replace(k.value)
	return s[:min(len(s), 240)] + ".yaml"
}

// hostileSpots are the places of a manifest key material is put in, one
// at a time: each returns the hostile Secret (a CA certificate in its
// data, so that every command reads it) and the name of its file.
var hostileSpots = []struct {
	name string
	put  func(obj map[string]any, meta map[string]any, k keyMaterial) (file string)
}{
	{"apiVersion", func(obj, _ map[string]any, k keyMaterial) string { obj["apiVersion"] = k.value; return "" }},
	{"kind", func(obj, _ map[string]any, k keyMaterial) string { obj["kind"] = k.value; return "" }},
	{"metadata.name", func(_, meta map[string]any, k keyMaterial) string { meta["name"] = k.value; return "" }},
	{"metadata.namespace", func(_, meta map[string]any, k keyMaterial) string { meta["namespace"] = k.value; return "" }},
	{"data key", func(obj, _ map[string]any, k keyMaterial) string {
		obj["data"].(map[string]any)[k.value] = obj["data"].(map[string]any)["ca.crt"]
		return ""
	}},
	{"annotation key", func(_, meta map[string]any, k keyMaterial) string {
		meta["annotations"] = map[string]any{k.value: "x"}
		return ""
	}},
	{"file name", func(_, _ map[string]any, k keyMaterial) string { return k.fileName() }},
}

// hostilePackage writes examples/envoy-gateway to a new directory with
// one more file, the hostile Secret of spot, and returns the directory
// and the file's name.
func hostilePackage(t *testing.T, spot int, k keyMaterial) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(golden.Path("examples", "envoy-gateway"))))
	meta := map[string]any{"name": "hostile", "namespace": "default"}
	obj := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": meta,
		"data": map[string]any{"ca.crt": base64.StdEncoding.EncodeToString(testpki.Fixture("ca-2026").PEM())}}
	file = hostileSpots[spot].put(obj, meta, k)
	if file == "" {
		file = "hostile.yaml"
	}
	text, err := yaml.Marshal(obj)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, file), text, 0o644))
	return dir, file
}

// resourceList is the package in dir as function mode reads it: its
// manifests as items, each with its file's name as its path annotation,
// the policy as the functionConfig.
func resourceList(t *testing.T, dir string) string {
	t.Helper()
	nodes, err := kio.LocalPackageReader{PackagePath: dir, OmitReaderAnnotations: false}.Read()
	require.NoError(t, err)
	var items []*yaml.RNode
	var policy *yaml.RNode
	for _, n := range nodes {
		switch n.GetKind() {
		case "RotationPolicy":
			policy = n
		case "Kptfile", "Kustomization":
		default:
			items = append(items, n)
		}
	}
	var b strings.Builder
	require.NoError(t, kio.ByteWriter{Writer: &b, FunctionConfig: policy, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}.Write(items))
	return b.String()
}

// documents is the package in dir as Helm pipes it to a post-renderer:
// every manifest but the policy, the Kptfile and the kustomization.
func documents(t *testing.T, dir string) string {
	t.Helper()
	list := resourceList(t, dir)
	root, err := yaml.Parse(list)
	require.NoError(t, err)
	items, err := root.Pipe(yaml.Lookup("items"))
	require.NoError(t, err)
	nodes, err := items.Elements()
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, kio.ByteWriter{Writer: &b, ClearAnnotations: []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation}}.Write(nodes))
	return b.String()
}

// invocation is one command the key material test runs: its arguments
// and stdin for the package in dir (the hostile file's name is file), and
// what of its stdout must hold no key material - all of it, but for the
// input that a command passes through as it is.
type invocation struct {
	name  string
	args  func(dir, file string) []string
	stdin func(t *testing.T, dir string) string
	shown func(stdout string) string
}

func all(stdout string) string { return stdout }

// emptyBase returns an empty directory beside dir: diff's BASE, so that
// everything of the package is added at HEAD.
func emptyBase(dir string) string {
	base := filepath.Join(filepath.Dir(dir), "diff-empty-base")
	if err := os.MkdirAll(base, 0o755); err != nil {
		panic(err)
	}
	return base
}

// commands are every command of rotate-certs, run on a package: a new
// command is one row.
var commands = []invocation{
	{name: "function mode", stdin: resourceList, shown: notEchoed},
	{name: "render", args: func(dir, _ string) []string { return []string{"render", dir, "--now", checkNow} }, shown: all},
	{name: "render --dry-run", args: func(dir, _ string) []string { return []string{"render", dir, "--dry-run", "--now", checkNow} }, shown: all},
	{name: "check", args: func(dir, _ string) []string { return []string{"check", dir, "--now", checkNow} }, shown: all},
	{name: "check -o wide", args: func(dir, _ string) []string { return []string{"check", dir, "--now", checkNow, "-o", "wide"} }, shown: all},
	{name: "check -o json", args: func(dir, _ string) []string { return []string{"check", dir, "--now", checkNow, "-o", "json"} }, shown: all},
	{name: "check -o svg", args: func(dir, _ string) []string { return []string{"check", dir, "--now", checkNow, "-o", "svg"} }, shown: all},
	{name: "init", args: func(dir, _ string) []string { return []string{"init", dir, "--now", checkNow} }, shown: all},
	{name: "diff", args: func(dir, _ string) []string { return []string{"diff", emptyBase(dir), dir, "--now", checkNow} }, shown: all},
	{name: "diff -o markdown", args: func(dir, _ string) []string {
		return []string{"diff", emptyBase(dir), dir, "--now", checkNow, "-o", "markdown"}
	}, shown: all},
	{name: "diff -o json", args: func(dir, _ string) []string {
		return []string{"diff", emptyBase(dir), dir, "--now", checkNow, "-o", "json"}
	}, shown: all},
	{name: "snapshot", args: func(dir, file string) []string {
		return []string{"snapshot", filepath.Join(dir, file), filepath.Join(dir, "gateway-ca.yaml")}
	}, shown: all},
	{
		name: "helm-post-renderer", stdin: documents,
		args: func(dir, _ string) []string {
			return []string{"helm-post-renderer", "--policy", filepath.Join(dir, "rotation-policy.yaml")}
		},
		// The chart's documents come out as they went in.
		shown: func(string) string { return "" },
	},
}

// No command repeats key material put in a manifest's apiVersion, kind,
// name, namespace, data key or annotation key, or in the name of its
// file, on stderr or in what it prints on stdout: every command, every
// form of key, every place.
func TestNoCommandPrintsKeyMaterial(t *testing.T) {
	for _, k := range keyMaterials(t) {
		for spot := range hostileSpots {
			for _, c := range commands {
				t.Run(k.name+"/"+hostileSpots[spot].name+"/"+c.name, func(t *testing.T) {
					dir, file := hostilePackage(t, spot, k)
					var args []string
					if c.args != nil {
						args = c.args(dir, file)
					}
					stdin := ""
					if c.stdin != nil {
						stdin = c.stdin(t, dir)
					}
					stdout, stderr, _ := runCLI(t, stdin, args...)
					for _, where := range []struct{ name, text string }{{"stdout", c.shown(stdout)}, {"stderr", stderr}} {
						for _, n := range k.needles() {
							if i := strings.Index(where.text, n); i >= 0 {
								t.Fatalf("%s repeats the key (%q): %q", where.name, n, where.text[max(0, i-200):min(len(where.text), i+80)])
							}
						}
					}
				})
			}
		}
	}
}
