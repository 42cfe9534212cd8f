// Package synth generates large, realistic, reproducible ResourceLists for
// benchmarks and scale tests: a third Secrets holding real CA certificates,
// a third Deployments mounting them, the rest ConfigMaps and unrelated
// custom resources, and a RotationPolicy with one bundle per namespace.
//
// The same resources come in the shapes a function receives them in: as
// written by hand (Plain), and as kpt and kustomize send them (KptEval,
// KptRender, Kustomize), with the annotations those orchestrators add to
// every item. Package writes them as a directory of files, the repository
// those lists are read from.
package synth

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// Shape is the form of a generated ResourceList: who would send it.
type Shape string

const (
	// Plain is a hand-made list: resources as written, no annotations.
	Plain Shape = "plain"
	// KptEval is what `kpt fn eval DIR --exec FN --fn-config policy.yaml`
	// sends for the package: every item annotated with its file, index and
	// ids, in the order kpt walks the files, and the policy (not in the
	// package) as functionConfig.
	KptEval Shape = "kpt-eval"
	// KptRender is what `kpt fn render` sends for the package with a
	// Kptfile pipeline running the function: KptEval's annotations plus
	// the package path, the Kptfile and the policy file as items too.
	KptRender Shape = "kpt-render"
	// Kustomize is what `kustomize build --enable-alpha-plugins
	// --enable-exec` sends with the policy under transformers: every
	// resource re-encoded from JSON (keys sorted, block style, comments
	// gone) with kustomize's id and kyaml's index and id annotations.
	Kustomize Shape = "kustomize"
)

// Shapes lists every shape, hand-made first.
var Shapes = []Shape{Plain, KptEval, KptRender, Kustomize}

// Options size the generated list.
type Options struct {
	// Resources is the number of items.
	Resources int
	// Bundles is the number of trust bundles in the policy, one per
	// namespace; the first Bundles items are their source Secrets.
	Bundles int
	// Seed makes the list reproducible.
	Seed uint64
	// Shape is the form of the list; empty means Plain.
	Shape Shape
	// PerFile is the number of resources per file of the package (default
	// 10): 100,000 resources are 10,000 files.
	PerFile int
	// Exec is the function's executable as the Kptfile pipeline and the
	// kustomize function annotation name it (default "rotate-certs").
	Exec string
	// PackagePath is the absolute directory kpt fn render records for the
	// package (default "/pkg").
	PackagePath string
}

func (o Options) defaults() Options {
	if o.Bundles < 1 {
		o.Bundles = 1
	}
	if o.Shape == "" {
		o.Shape = Plain
	}
	if o.PerFile < 1 {
		o.PerFile = 10
	}
	if o.Exec == "" {
		o.Exec = "rotate-certs"
	}
	if o.PackagePath == "" {
		o.PackagePath = "/pkg"
	}
	return o
}

// File is one file of a generated package.
type File struct {
	// Path is slash-separated, relative to the package.
	Path string
	Data []byte
}

// annotation is one metadata.annotations entry, its value as it is written:
// quoted, or a block scalar's header and lines (without their indentation).
type annotation struct{ key, value string }

// resource is one generated object. write renders it at column 0 with the
// given extra annotations: as written by hand, or (sorted) as kustomize
// re-encodes it.
type resource struct {
	apiVersion, kind, name, namespace string
	write                             func(b *bytes.Buffer, sorted bool, extra []annotation)
}

// ResourceList returns the generated list as YAML, in o.Shape.
func ResourceList(o Options) []byte {
	o = o.defaults()
	res := resources(o)
	files := layout(o, len(res))
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n")
	switch o.Shape {
	case Plain:
		b.WriteString("functionConfig:\n")
		indent(&b, policyText(o, false, nil), "  ", "  ")
		b.WriteString("items:\n")
		for _, r := range res {
			item(&b, r, false, nil)
		}
		return b.Bytes()
	case KptEval:
		b.WriteString("items:\n")
		for i, r := range res {
			f := files[i]
			item(&b, r, false, kptAnnotations(f.path, f.index, i, ""))
		}
		b.WriteString("functionConfig:\n")
		indent(&b, policyText(o, false, []annotation{
			{"config.kubernetes.io/index", "'0'"},
			{"internal.config.kubernetes.io/index", "'0'"},
			{"internal.config.kubernetes.io/seqindent", "'compact'"},
		}), "  ", "  ")
	case KptRender:
		// kpt walks the package in lexical order: the Kptfile, the
		// resource directories, then policy.yaml.
		b.WriteString("items:\n")
		n := 0
		indent(&b, kptfile(o, kptAnnotations("Kptfile", 0, n, o.PackagePath)), "- ", "  ")
		n++
		for i, r := range res {
			f := files[i]
			item(&b, r, false, kptAnnotations(f.path, f.index, n, o.PackagePath))
			n++
		}
		policy := policyText(o, false, kptAnnotations("policy.yaml", 0, n, o.PackagePath))
		indent(&b, policy, "- ", "  ")
		b.WriteString("functionConfig:\n")
		indent(&b, policy, "  ", "  ")
	case Kustomize:
		b.WriteString("items:\n")
		for i, r := range res {
			item(&b, r, true, kustomizeAnnotations(r, i))
		}
		b.WriteString("functionConfig:\n")
		indent(&b, policyText(o, true, nil), "  ", "  ")
	}
	return b.Bytes()
}

// Package returns the files the lists of o are read from: the resources,
// PerFile to a file, in numbered directories of 100 files, and
// policy.yaml; for KptRender a Kptfile, for Kustomize a kustomization.yaml
// listing every file and the policy as a transformer. The policy is marked
// local-config.
func Package(o Options) []File {
	o = o.defaults()
	res := resources(o)
	files := layout(o, len(res))
	var out []File
	var cur *File
	for i, r := range res {
		f := files[i]
		if cur == nil || cur.Path != f.path {
			out = append(out, File{Path: f.path})
			cur = &out[len(out)-1]
		} else {
			cur.Data = append(cur.Data, "---\n"...)
		}
		var b bytes.Buffer
		r.write(&b, false, nil)
		cur.Data = append(cur.Data, b.Bytes()...)
	}
	out = append(out, File{Path: "policy.yaml", Data: policyText(o, o.Shape == Kustomize, nil)})
	switch o.Shape {
	case KptRender:
		out = append(out, File{Path: "Kptfile", Data: kptfile(o, nil)})
	case Kustomize:
		var k bytes.Buffer
		k.WriteString("resources:\n")
		for _, f := range out[:len(out)-1] {
			fmt.Fprintf(&k, "- %s\n", f.Path)
		}
		k.WriteString("transformers:\n- policy.yaml\n")
		out = append(out, File{Path: "kustomization.yaml", Data: k.Bytes()})
	}
	return out
}

// WritePackage writes Package(o) under dir.
func WritePackage(dir string, o Options) error {
	for _, f := range Package(o) {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// place is where a resource lives in the package.
type place struct {
	path  string
	index int // within its file
}

func layout(o Options, n int) []place {
	out := make([]place, n)
	for i := range out {
		file := i / o.PerFile
		out[i] = place{path: fmt.Sprintf("part-%03d/res-%06d.yaml", file/100, file), index: i % o.PerFile}
	}
	return out
}

// kptAnnotations are the annotations kpt adds to the n-th item of the list
// read from file at index; packagePath is set by kpt fn render only.
func kptAnnotations(file string, index, n int, packagePath string) []annotation {
	out := []annotation{
		{"config.kubernetes.io/index", quote(strconv.Itoa(index))},
		{"config.kubernetes.io/path", quote(file)},
		{"internal.config.kubernetes.io/index", quote(strconv.Itoa(index))},
	}
	if packagePath != "" {
		out = append(out, annotation{"internal.config.kubernetes.io/package-path", quote(packagePath)})
	}
	return append(out,
		annotation{"internal.config.kubernetes.io/path", quote(file)},
		annotation{"internal.config.kubernetes.io/seqindent", "'compact'"},
		annotation{"internal.config.kubernetes.io/annotations-migration-resource-id", quote(strconv.Itoa(n))},
		annotation{"internal.config.kubernetes.io/id", quote(strconv.Itoa(n + 1))},
		annotation{"config.k8s.io/id", quote(strconv.Itoa(n + 1))},
	)
}

// kustomizeAnnotations are kustomize's resource id and the index and ids
// kyaml's reader adds to the n-th item.
func kustomizeAnnotations(r resource, n int) []annotation {
	var id strings.Builder
	id.WriteString("|\n")
	group, version, found := strings.Cut(r.apiVersion, "/")
	if !found {
		group, version = "", r.apiVersion
	}
	if group != "" {
		id.WriteString("group: " + group + "\n")
	}
	id.WriteString("kind: " + r.kind + "\nname: " + r.name + "\n")
	if r.namespace != "" {
		id.WriteString("namespace: " + r.namespace + "\n")
	}
	id.WriteString("version: " + version)
	return []annotation{
		{"kustomize.config.k8s.io/id", id.String()},
		{"config.kubernetes.io/index", quote(strconv.Itoa(n))},
		{"internal.config.kubernetes.io/index", quote(strconv.Itoa(n))},
		{"internal.config.kubernetes.io/annotations-migration-resource-id", quote(strconv.Itoa(n))},
		{"internal.config.kubernetes.io/id", quote(strconv.Itoa(n + 1))},
		{"config.k8s.io/id", quote(strconv.Itoa(n + 1))},
	}
}

func quote(s string) string { return "'" + s + "'" }

// writeAnnotations writes an annotations mapping at indent (the indent of
// metadata's keys), or nothing when there are none.
func writeAnnotations(b *bytes.Buffer, indent string, annos []annotation) {
	if len(annos) == 0 {
		return
	}
	b.WriteString(indent + "annotations:\n")
	for _, a := range annos {
		b.WriteString(indent + "  " + a.key + ": ")
		// A block scalar's lines are indented under its key.
		b.WriteString(strings.ReplaceAll(a.value, "\n", "\n"+indent+"    "))
		b.WriteByte('\n')
	}
}

// item writes r as a list entry.
func item(b *bytes.Buffer, r resource, sorted bool, extra []annotation) {
	var doc bytes.Buffer
	r.write(&doc, sorted, extra)
	indent(b, doc.Bytes(), "- ", "  ")
}

// indent writes text with first before its first line and rest before
// every other non-empty line.
func indent(b *bytes.Buffer, text []byte, first, rest string) {
	for i, line := range bytes.SplitAfter(text, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if i == 0 {
			b.WriteString(first)
		} else if len(line) > 1 {
			b.WriteString(rest)
		}
		b.Write(line)
	}
}

func kptfile(o Options, extra []annotation) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: synth\n")
	writeAnnotations(&b, "  ", append([]annotation{{"config.kubernetes.io/local-config", `"true"`}}, extra...))
	fmt.Fprintf(&b, "pipeline:\n  mutators:\n  - exec: %s\n    configPath: policy.yaml\n", o.Exec)
	return b.Bytes()
}

// policyText is the RotationPolicy: one bundle per namespace. sorted
// writes it as kustomize re-encodes it (and with the function annotation
// kustomize needs to run it).
func policyText(o Options, sorted bool, extra []annotation) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: rotate-certs.dev/v1alpha1\nkind: RotationPolicy\nmetadata:\n")
	switch {
	case sorted:
		writeAnnotations(&b, "  ", append([]annotation{
			{"config.kubernetes.io/function", "|\nexec:\n  path: " + o.Exec},
			{"config.kubernetes.io/local-config", `"true"`},
		}, extra...))
		b.WriteString("  name: synth\n")
	case o.Shape == Plain:
		b.WriteString("  name: synth\n")
	default:
		b.WriteString("  name: synth\n")
		writeAnnotations(&b, "  ", append([]annotation{{"config.kubernetes.io/local-config", `"true"`}}, extra...))
	}
	b.WriteString("spec:\n  now: \"2026-11-22T00:00:00Z\"\n  trustBundles:\n")
	for i := 0; i < o.Bundles; i++ {
		if sorted {
			fmt.Fprintf(&b, "  - name: bundle-%d\n    sources:\n    - secret:\n        name: ca-%d\n        namespace: ns-%d\n    target:\n      name: trust-%d\n", i, i, i, i)
		} else {
			fmt.Fprintf(&b, "  - name: bundle-%d\n    sources:\n    - secret: {name: ca-%d, namespace: ns-%d}\n    target: {name: trust-%d}\n", i, i, i, i)
		}
	}
	return b.Bytes()
}

// resources generates the objects of o in list order.
func resources(o Options) []resource {
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	// A small pool of real CAs, reused: parsing cost per Secret is real,
	// generation cost stays low.
	pool := make([]string, 16)
	for i := range pool {
		ca := testpki.NewCA(fmt.Sprintf("synth-ca-%d", i), testpki.Date(2026, 1, 1), testpki.Days(3650))
		pool[i] = base64.StdEncoding.EncodeToString(ca.PEM())
	}
	var out []resource
	for ns := 0; ns < o.Bundles; ns++ {
		out = append(out, secret(fmt.Sprintf("ca-%d", ns), fmt.Sprintf("ns-%d", ns), "", pool[ns%len(pool)]))
	}
	for i := o.Bundles; i < o.Resources; i++ {
		ns := fmt.Sprintf("ns-%d", i%o.Bundles)
		switch i % 6 {
		case 0, 3: // Secret with a CA
			out = append(out, secret(fmt.Sprintf("secret-%d", i), ns, fmt.Sprintf("app-%d", i), pool[rng.IntN(len(pool))]))
		case 1, 4: // Deployment consuming its namespace's trust bundle
			out = append(out, deployment(i, ns, 1+rng.IntN(3), rng.IntN(100), fmt.Sprintf("trust-%d", i%o.Bundles)))
		case 2: // ConfigMap
			out = append(out, configMap(i, ns, rng.IntN(9)))
		default: // an unrelated custom resource
			out = append(out, widget(i, ns, rng.IntN(1000)))
		}
	}
	return out
}

func secret(name, ns, app, data string) resource {
	return resource{apiVersion: "v1", kind: "Secret", name: name, namespace: ns, write: func(b *bytes.Buffer, sorted bool, extra []annotation) {
		if sorted {
			fmt.Fprintf(b, "apiVersion: v1\ndata:\n  ca.crt: %s\nkind: Secret\nmetadata:\n", data)
			writeAnnotations(b, "  ", extra)
			if app != "" {
				fmt.Fprintf(b, "  labels:\n    app: %s\n", app)
			}
			fmt.Fprintf(b, "  name: %s\n  namespace: %s\ntype: Opaque\n", name, ns)
			return
		}
		fmt.Fprintf(b, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns)
		if app != "" {
			fmt.Fprintf(b, "  labels:\n    app: %s # owner\n", app)
		}
		writeAnnotations(b, "  ", extra)
		fmt.Fprintf(b, "type: Opaque\ndata:\n  ca.crt: %s\n", data)
	}}
}

func deployment(i int, ns string, replicas, tag int, trust string) resource {
	name := fmt.Sprintf("deploy-%d", i)
	return resource{apiVersion: "apps/v1", kind: "Deployment", name: name, namespace: ns, write: func(b *bytes.Buffer, sorted bool, extra []annotation) {
		if sorted {
			fmt.Fprintf(b, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n")
			writeAnnotations(b, "  ", extra)
			fmt.Fprintf(b, `  name: %s
  namespace: %s
spec:
  replicas: %d
  selector:
    matchLabels:
      app: app-%d
  template:
    metadata:
      labels:
        app: app-%d
    spec:
      containers:
      - image: registry.example/app:%d
        name: main
        volumeMounts:
        - mountPath: /etc/trust
          name: trust
      volumes:
      - name: trust
        secret:
          secretName: %s
`, name, ns, replicas, i, i, tag, trust)
			return
		}
		fmt.Fprintf(b, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns)
		writeAnnotations(b, "  ", extra)
		fmt.Fprintf(b, `spec:
  replicas: %d
  selector:
    matchLabels: {app: app-%d}
  template:
    metadata:
      labels: {app: app-%d}
    spec:
      containers:
      - name: main
        image: registry.example/app:%d
        volumeMounts:
        - {name: trust, mountPath: /etc/trust}
      volumes:
      - name: trust
        secret: {secretName: %s}
`, replicas, i, i, tag, trust)
	}}
}

func configMap(i int, ns string, level int) resource {
	name := fmt.Sprintf("config-%d", i)
	return resource{apiVersion: "v1", kind: "ConfigMap", name: name, namespace: ns, write: func(b *bytes.Buffer, sorted bool, extra []annotation) {
		settings := fmt.Sprintf("level: %d\n    name: \"cm-%d\"\n", level, i)
		if sorted {
			fmt.Fprintf(b, "apiVersion: v1\ndata:\n  settings.yaml: |\n    %skind: ConfigMap\nmetadata:\n", settings)
			writeAnnotations(b, "  ", extra)
			fmt.Fprintf(b, "  name: %s\n  namespace: %s\n", name, ns)
			return
		}
		fmt.Fprintf(b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns)
		writeAnnotations(b, "  ", extra)
		fmt.Fprintf(b, "data:\n  # tuning\n  settings.yaml: |\n    %s", settings)
	}}
}

func widget(i int, ns string, size int) resource {
	name := fmt.Sprintf("widget-%d", i)
	return resource{apiVersion: "example.com/v1", kind: "Widget", name: name, namespace: ns, write: func(b *bytes.Buffer, sorted bool, extra []annotation) {
		fmt.Fprintf(b, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n")
		if sorted {
			writeAnnotations(b, "  ", extra)
			fmt.Fprintf(b, "  name: %s\n  namespace: %s\nspec:\n  size: %d\n  tags:\n  - a\n  - b\n  - c\n", name, ns, size)
			return
		}
		fmt.Fprintf(b, "  name: %s\n  namespace: %s\n", name, ns)
		writeAnnotations(b, "  ", extra)
		fmt.Fprintf(b, "spec:\n  size: %d\n  tags: [a, b, c]\n", size)
	}}
}
