package diff

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// A fuzzed tree is one side of a change, made from the fuzzer's bytes: a
// kustomization (app/) whose fields - namespace, resources, generators
// from files, env files and literals, patches, a base, a component - each
// byte chooses, the generator inputs and manifests it reads, and plain
// manifests and a certificate file beside it. Every choice is one byte,
// so mutating a byte changes one thing, and past the end of the bytes
// every choice is the first: an empty input is the smallest tree.

// choices reads the fuzzer's bytes as a sequence of choices.
type choices struct {
	data []byte
	at   int
}

func (c *choices) next() byte {
	if c.at >= len(c.data) {
		return 0
	}
	c.at++
	return c.data[c.at-1]
}

// pick chooses one of n.
func (c *choices) pick(n int) int { return int(c.next()) % n }

// weighted chooses an index of weights, each as often as its weight.
func (c *choices) weighted(weights ...int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := c.pick(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return 0
}

// rarely is yes once in n.
func (c *choices) rarely(n int) bool { return c.pick(n) == n-1 }

// flag chooses yes or no.
func (c *choices) flag() bool { return c.next()&1 == 1 }

// text is up to 63 of the bytes as they are, its length a choice.
func (c *choices) text() string {
	n := c.pick(64)
	end := min(c.at+n, len(c.data))
	s := string(c.data[c.at:end])
	c.at = end
	return s
}

// fuzzMaterial is what a fuzzed tree's values hold, chosen by index:
// certificates as PEM (CAs current, next, expired, foreign and SHA-1
// signed, an intermediate, leaves) and private keys as PEM.
type fuzzMaterial struct {
	certs, keys []string
}

func newFuzzMaterial() fuzzMaterial {
	var m fuzzMaterial
	for _, name := range []string{"ca-2025", "ca-2026", "ca-2027", "ca-expired", "attacker-ca",
		"istio-root-old", "istio-ca-old", "leaf-old", "leaf-new", "client-old"} {
		m.certs = append(m.certs, string(testpki.Fixture(name).PEM()))
	}
	sha1 := testpki.NewSHA1CA("fuzz-sha1-ca", testpki.Date(2024, 1, 1), testpki.Days(3650))
	m.certs = append(m.certs, string(sha1.PEM()))
	for _, name := range []string{"ca-2025", "ca-2026", "leaf-old", "istio-ca-old"} {
		m.keys = append(m.keys, string(testpki.Fixture(name).KeyPEM()))
	}
	return m
}

// The few names of each kind a tree chooses among, so that generators,
// manifests, patches and references meet.
var (
	fuzzNames      = []string{"ca", "trust", "cacerts", "webhook"}
	fuzzNamespaces = []string{"", "app", "istio-system", "other"}
	fuzzKeys       = []string{"ca.crt", "tls.crt", "tls.key", "root-cert.pem", "ca-bundle.crt"}
	fuzzInputs     = []string{"ca.crt", "root-cert.pem", "tls.key", "bundle.txt"}
	// a Deployment's reload annotation: mostly none, rarely invalid
	fuzzReloads = []string{"", "hot", "never", "sometimes"}
)

// treeGen makes one side's files from its choices.
type treeGen struct {
	c     *choices
	m     fuzzMaterial
	files map[string]string
}

// fuzzTree is the tree data chooses, by slash path.
func fuzzTree(data []byte, m fuzzMaterial) map[string]string {
	g := &treeGen{c: &choices{data: data}, m: m, files: map[string]string{}}
	for i := range 1 + g.c.pick(3) {
		g.files[fmt.Sprintf("app/m%d.yaml", i)] = g.manifests()
	}
	g.inputs("app")
	if g.c.flag() {
		g.inputs("base")
		g.files["base/objects.yaml"] = g.manifests()
		g.files["base/kustomization.yaml"] = "resources:\n- objects.yaml\n" + g.generators("base")
	}
	if g.c.flag() {
		g.files["comp/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n" +
			g.generators("comp") + g.patches("comp")
	}
	if g.c.flag() {
		g.files["plain/objects.yaml"] = g.manifests()
	}
	if g.c.pick(4) == 0 {
		g.files["certs/ca.pem"] = g.pem()
	}
	g.files["app/kustomization.yaml"] = g.kustomization()
	return g.files
}

// inputs writes the generator inputs of dir that the choices keep.
func (g *treeGen) inputs(dir string) {
	for _, name := range fuzzInputs {
		if g.c.flag() {
			g.files[dir+"/"+name] = g.pem()
		}
	}
	if g.c.flag() {
		var lines []string
		for range 1 + g.c.pick(3) {
			lines = append(lines, g.key()+"="+g.line())
		}
		g.files[dir+"/vars.env"] = strings.Join(lines, "\n") + "\n"
	}
}

func (g *treeGen) name() string { return fuzzNames[g.c.pick(len(fuzzNames))] }
func (g *treeGen) key() string  { return fuzzKeys[g.c.pick(len(fuzzKeys))] }
func (g *treeGen) cert() string { return g.m.certs[g.c.pick(len(g.m.certs))] }

// namespace is a namespace of the menu, or rarely the bytes as they are.
func (g *treeGen) namespace() string {
	if g.c.rarely(32) {
		return g.c.text()
	}
	return fuzzNamespaces[g.c.pick(len(fuzzNamespaces))]
}

// pem is a value a trust object or a generator input holds: one or two
// certificates (a bundle, or a leaf and its issuer), a key, a certificate
// beside its key, nothing, or the bytes as they are.
func (g *treeGen) pem() string {
	switch g.c.weighted(16, 8, 3, 2, 2, 1) {
	case 1:
		return g.cert() + g.cert()
	case 2:
		return g.m.keys[g.c.pick(len(g.m.keys))]
	case 3:
		return g.cert() + g.m.keys[g.c.pick(len(g.m.keys))]
	case 4:
		return ""
	case 5:
		return g.c.text()
	}
	return g.cert()
}

// line is a one-line value: an env file's or a literal's.
func (g *treeGen) line() string {
	switch g.c.weighted(8, 4, 3, 1) {
	case 1:
		return b64(g.pem())
	case 2:
		return g.pem() // a literal may hold lines
	case 3:
		return strings.ReplaceAll(g.c.text(), "\n", "")
	}
	return b64(g.cert())
}

// manifests is a file of one to three documents.
func (g *treeGen) manifests() string {
	var ds []string
	for range 1 + g.c.pick(3) {
		ds = append(ds, g.object())
	}
	return docs(ds...)
}

// object is a document: a Secret or ConfigMap holding CAs, a webhook's
// caBundle, a Deployment reading a trust object or holding CAs in env, a
// RotationPolicy, or the bytes as they are.
func (g *treeGen) object() string {
	ns, name := g.namespace(), g.name()
	switch g.c.weighted(16, 8, 8, 16, 4, 4, 4, 1) {
	case 0:
		data := map[string]string{}
		for range 1 + g.c.pick(3) {
			data[g.key()] = g.pem()
		}
		return secret(ns, name, data)
	case 1:
		return configMap(ns, name, map[string]string{g.key(): g.pem()})
	case 2:
		return "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: " + name +
			"\nwebhooks:\n- name: validate.example.com\n  clientConfig:\n    caBundle: " + b64(g.pem()) +
			"\n    service: {name: " + name + ", namespace: app}\n"
	case 3:
		return g.workload(ns, name)
	case 4:
		return object("apps/v1", "Deployment", ns, name, nil) + "spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        env:\n        - name: TRUST_ANCHORS\n          value: " +
			strconv.Quote(g.pem()) + "\n"
	case 5:
		return clusterPolicy(name, g.name())
	case 6:
		return object("v1", "Secret", ns, name, nil) + "stringData:\n  " + g.key() + ": " + strconv.Quote(g.pem()) + "\n"
	}
	return g.c.text() + "\n"
}

// workload is a Deployment that reads a Secret or ConfigMap of the menu.
func (g *treeGen) workload(ns, name string) string {
	kind := []string{"Secret", "ConfigMap"}[g.c.pick(2)]
	how := []string{"volume", "subPath", "env"}[g.c.pick(3)]
	var annotations []string
	if r := g.reload(); r != "" {
		annotations = []string{"rotate-certs.dev/reload", r}
	}
	return deployment(ns, name+"-app", kind, g.name(), how, g.key(), annotations...)
}

// reload is a reload annotation's value: mostly none, rarely invalid.
func (g *treeGen) reload() string { return fuzzReloads[g.c.weighted(10, 3, 2, 1)] }

// kustomization is app/kustomization.yaml: each field a choice.
func (g *treeGen) kustomization() string {
	var b strings.Builder
	if g.c.flag() {
		b.WriteString("namespace: " + strconv.Quote(g.namespace()) + "\n")
	}
	if g.c.pick(4) == 0 {
		b.WriteString("namePrefix: p-\n")
	}
	var resources []string
	for _, f := range g.sorted("app/m") {
		if g.c.pick(4) != 0 {
			resources = append(resources, strings.TrimPrefix(f, "app/"))
		}
	}
	if _, ok := g.files["base/kustomization.yaml"]; ok && g.c.flag() {
		resources = append(resources, "../base")
	}
	// what kustomize refuses: a file outside the kustomization's
	// directory, a file or base that is not there; and a remote base
	for _, r := range []string{"../plain/objects.yaml", "missing.yaml", "../base", "https://github.com/example/base?ref=v1"} {
		if g.c.rarely(16) {
			resources = append(resources, r)
		}
	}
	b.WriteString(list("resources", resources))
	if _, ok := g.files["comp/kustomization.yaml"]; ok && g.c.flag() {
		b.WriteString("components:\n- ../comp\n")
	}
	b.WriteString(g.generators("app") + g.patches("app"))
	if g.c.rarely(32) {
		b.WriteString(g.c.text())
	}
	return b.String()
}

// sorted are the files whose path starts with prefix, sorted.
func (g *treeGen) sorted(prefix string) []string {
	var out []string
	for f := range g.files {
		if strings.HasPrefix(f, prefix) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// list is a YAML list field of items, "" when there are none.
func list(field string, items []string) string {
	if len(items) == 0 {
		return ""
	}
	return field + ":\n- " + strings.Join(items, "\n- ") + "\n"
}

// generators are the secretGenerator and configMapGenerator of the
// kustomization in dir, with its generatorOptions.
func (g *treeGen) generators(dir string) string {
	var b strings.Builder
	for _, field := range []string{"secretGenerator", "configMapGenerator"} {
		if n := g.c.pick(3); n > 0 {
			b.WriteString(field + ":\n")
			for range n {
				b.WriteString(g.generator(dir, field == "secretGenerator"))
			}
		}
	}
	if g.c.pick(4) == 0 {
		b.WriteString("generatorOptions:\n  disableNameSuffixHash: true\n")
	}
	return b.String()
}

// generator is one generator entry reading dir's inputs: files (some under
// another key), an env file, literals, and its options.
func (g *treeGen) generator(dir string, isSecret bool) string {
	s := "- name: " + g.name() + "\n"
	if g.c.pick(4) == 0 {
		s += "  namespace: " + strconv.Quote(g.namespace()) + "\n"
	}
	if isSecret && g.c.pick(4) == 0 {
		s += "  type: kubernetes.io/tls\n"
	}
	if g.c.rarely(32) {
		s += "  behavior: " + []string{"merge", "replace", "create"}[g.c.pick(3)] + "\n"
	}
	var files []string
	for _, in := range fuzzInputs {
		if _, ok := g.files[dir+"/"+in]; ok && g.c.flag() {
			if g.c.rarely(4) {
				in = g.key() + "=" + in
			}
			files = append(files, in)
		}
	}
	if g.c.rarely(16) {
		files = append(files, []string{"missing.pem", "../app/ca.crt"}[g.c.pick(2)])
	}
	s += indentLines(list("files", files), 2)
	if _, ok := g.files[dir+"/vars.env"]; ok && g.c.flag() {
		s += "  envs:\n  - vars.env\n"
	}
	var literals []string
	for range g.c.weighted(4, 2, 1) {
		literals = append(literals, strconv.Quote(g.key()+"="+g.line()))
	}
	s += indentLines(list("literals", literals), 2)
	if g.c.flag() {
		s += "  options:\n    disableNameSuffixHash: true\n"
	}
	return s
}

// patches are the patches of the kustomization in dir.
func (g *treeGen) patches(dir string) string {
	var ps []string
	for range g.c.pick(3) {
		ps = append(ps, g.patch(dir))
	}
	if len(ps) == 0 {
		return ""
	}
	return "patches:\n" + strings.Join(ps, "")
}

// patch is one patch: strategic merge of a Secret's CA or a workload's
// template, inline or from a file, or a JSON 6902 operation on a
// Secret's or ConfigMap's CA.
func (g *treeGen) patch(dir string) string {
	name := g.name()
	switch g.c.pick(4) {
	case 0:
		return "- patch: |-\n" + indentLines(secret("", name, map[string]string{g.key(): g.pem()}), 4)
	case 1:
		var annotations []string
		if r := g.reload(); r != "" {
			annotations = []string{"rotate-certs.dev/reload", r}
		}
		return "- patch: |-\n" + indentLines(object("apps/v1", "Deployment", "", name+"-app", annotations)+
			"spec:\n  template:\n    metadata:\n      annotations: {rotate-certs.dev/trust-hash: \""+strconv.Itoa(g.c.pick(4))+"\"}\n", 4)
	case 2:
		kind := []string{"Secret", "ConfigMap"}[g.c.pick(2)]
		op := []string{"replace", "add", "remove"}[g.c.pick(3)]
		return fmt.Sprintf("- target: {kind: %s, name: %s}\n  patch: |-\n    - op: %s\n      path: /data/ca.crt\n      value: %s\n",
			kind, name, op, strconv.Quote(b64(g.pem())))
	}
	g.files[dir+"/patch.yaml"] = secret("", name, map[string]string{g.key(): g.pem()})
	return "- path: patch.yaml\n"
}

// indentLines indents each line of s by n spaces.
func indentLines(s string, n int) string {
	if s == "" {
		return ""
	}
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+pad) + "\n"
}

// writeTree writes files below a new directory and returns it.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	return writeTreeAt(t, t.TempDir(), files)
}

// writeTreeAt writes files below dir and returns it.
func writeTreeAt(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
