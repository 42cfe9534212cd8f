package diff

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/restart"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The agreement property of the one model of readers: for every tree of
// the repository's examples and test data and every trust object in it,
// the workloads render rolls when that object's CAs change are exactly
// the readers diff counts as reading it once and not rolled (Once, not
// Never), among the workloads that render reads (the object's package; in
// a tree without policies, the whole tree). A reader diff finds outside
// that render's input is one more reader, never one fewer.
func TestRenderAndDiffAgreeOnReaders(t *testing.T) {
	if testing.Short() {
		t.Skip("walks every tree of examples/ and testdata/")
	}
	trees := agreementTrees(t)
	objects, disagree := 0, 0
	for _, tr := range trees {
		n, bad := agreeOn(t, tr)
		objects += n
		disagree += len(bad)
		for _, b := range bad {
			t.Errorf("%s: %s", tr.name, b)
		}
	}
	t.Logf("%d trees, %d trust objects, %d disagreements", len(trees), objects, disagree)
	if objects < 100 {
		t.Errorf("only %d trust objects walked: the walk misses the examples", objects)
	}
}

// agreementTree is one tree: a directory read as diff reads a side.
type agreementTree struct {
	name, dir string
}

// agreementTrees returns every directory under examples/ and testdata/,
// each a tree. A file holding a template over internal/testpki's fixtures
// (a golden case's input, a check case's) is read expanded, a golden
// ResourceList as its policy and items; what a test writes as expected
// output is left out, and so is a file that does not expand.
func agreementTrees(t *testing.T) []agreementTree {
	t.Helper()
	var out []agreementTree
	for _, top := range []string{"examples", "testdata"} {
		err := filepath.WalkDir(golden.Path(top), func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "fuzz" || d.Name() == "templates" {
				return filepath.SkipDir
			}
			rel, _ := filepath.Rel(golden.Path(), p)
			out = append(out, agreementTree{name: filepath.ToSlash(rel), dir: expandTree(t, p)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// expandTree copies the manifests under dir into a new directory with
// each template expanded, and returns it.
func expandTree(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && (d.Name() == "fuzz" || d.Name() == "templates") {
				return filepath.SkipDir
			}
			return err
		}
		name := d.Name()
		if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") || strings.HasPrefix(name, "expected") {
			return nil
		}
		text, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(text, []byte("{{")) {
			if text, err = testpki.ExpandTemplate(p, string(text)); err != nil {
				return nil // not a template over the fixtures: does not read
			}
		}
		if text = unwrapList(t, text); text == nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		dst := filepath.Join(out, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, text, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// unwrapList returns a ResourceList as its functionConfig (the policy, as
// a local-config file holds it) and its items, without the annotations
// that place them in other files; any other text as it is; nil when a
// ResourceList does not parse.
func unwrapList(t *testing.T, text []byte) []byte {
	t.Helper()
	if !bytes.Contains(text, []byte("kind: ResourceList")) {
		return text
	}
	rw := &kio.ByteReader{Reader: bytes.NewReader(text), OmitReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		return nil
	}
	if fc := rw.FunctionConfig; fc != nil && layout.IsPolicy(fc) {
		if err := fc.PipeE(yaml.SetAnnotation("config.kubernetes.io/local-config", "true")); err != nil {
			t.Fatal(err)
		}
		items = append([]*yaml.RNode{fc}, items...)
	}
	var b bytes.Buffer
	for _, it := range items {
		for _, a := range []string{kioutilPath, kioutilIndex, "config.kubernetes.io/path", "config.kubernetes.io/index"} {
			_ = it.PipeE(yaml.ClearAnnotation(a))
		}
		b.WriteString("---\n")
		b.WriteString(it.MustString())
	}
	return b.Bytes()
}

const (
	kioutilPath  = "internal.config.kubernetes.io/path"
	kioutilIndex = "internal.config.kubernetes.io/index"
)

// agreeOn checks the property on one tree: the number of trust objects
// checked and each disagreement.
func agreeOn(t *testing.T, tr agreementTree) (int, []string) {
	t.Helper()
	o := Options{Dir: tr.dir, Now: testpki.GoldenNow}
	log := exit.NewPrinter(io.Discard, "rotate-certs diff")
	side, err := open(o, Side{Dir: tr.dir}, log)
	if err != nil {
		t.Fatalf("%s: %v", tr.name, err)
	}
	set, err := side.load(log, nil)
	if err != nil {
		t.Fatalf("%s: %v", tr.name, err)
	}
	model := side.model(set, o, nil, &lending{})
	w := newWorld(set.Items, side.rel())
	var bad []string
	n := 0
	for _, obj := range model.Trust {
		node, pkg := w.find(obj.Resource)
		if node == nil || (pkg == nil && len(w.pkgs) > 0) {
			continue // no render reads it
		}
		n++
		rolls := w.rolls(t, model, obj, pkg)
		once := w.readsOnce(obj, pkg, w.refused(t, pkg, model))
		if !slices.Equal(rolls, once) {
			bad = append(bad, fmt.Sprintf("%s %s: render rolls [%s], diff counts as read once [%s]",
				obj.Resource, obj.Field, strings.Join(rolls, " "), strings.Join(once, " ")))
		}
	}
	return n, bad
}

// world is one tree's items as render reads them: by file, by package.
type world struct {
	items []*yaml.RNode
	rel   func(string) string
	pkgs  []*layout.Package
	pkgOf map[*yaml.RNode]*layout.Package
	byRes map[string]*yaml.RNode
}

func newWorld(items []*yaml.RNode, rel func(string) string) *world {
	w := &world{items: items, rel: rel, pkgOf: map[*yaml.RNode]*layout.Package{}, byRes: map[string]*yaml.RNode{}}
	w.pkgs, _ = layout.Split(items, layout.IsPolicy, nil)
	for _, p := range w.pkgs {
		for _, it := range p.Items {
			w.pkgOf[it] = p
		}
	}
	for _, it := range items {
		w.byRes[w.id(kube.RefOf(it))] = it
	}
	return w
}

// id names an object by file, kind, namespace and name.
func (w *world) id(r kube.Ref) string {
	return w.rel(r.Path) + " " + r.Kind + " " + r.Namespace + "/" + r.Name
}

func resID(r trustdiff.Resource) string {
	return r.File + " " + r.Kind + " " + r.Namespace + "/" + r.Name
}

// find returns the item a trust object is and its package (nil: none).
func (w *world) find(r trustdiff.Resource) (*yaml.RNode, *layout.Package) {
	node := w.byRes[resID(r)]
	return node, w.pkgOf[node]
}

// scope returns what render reads for a package: its items, or every
// item of a tree without policies.
func (w *world) scope(pkg *layout.Package) []*yaml.RNode {
	if pkg == nil {
		return w.items
	}
	return pkg.Items
}

// rolls returns the workloads render rolls when obj's CAs change, as a
// render of its package does: obj is a changed target of its bundle (the
// other targets of the bundle unchanged), or of a bundle of its own when
// no policy renders it, read by the bundle's restart rules with auto on
// (diff counts a reader whatever restart.auto says) and no waves.
func (w *world) rolls(t *testing.T, model *trustdiff.Model, obj *trustdiff.TrustObject, pkg *layout.Package) []string {
	t.Helper()
	items := w.scope(pkg)
	copies := make([]*yaml.RNode, len(items))
	byOrig := map[*yaml.RNode]*yaml.RNode{}
	for i, it := range items {
		copies[i] = it.Copy()
		byOrig[it] = copies[i]
		if kind, ok := policy.WorkloadKinds().At(it.GetApiVersion(), it.GetKind()); ok {
			if tmpl := kube.At(copies[i], kind.Template...); tmpl != nil && tmpl.YNode().Kind == yaml.MappingNode {
				_ = tmpl.PipeE(yaml.ClearAnnotation(restart.TrustHashAnnotation))
			}
		}
	}
	b := restart.Bundle{Name: "subject", Field: "spec.trustBundles[0]"}
	yes := true
	b.Restart.Auto = &yes
	if obj.Bundle != "" {
		b.Name = obj.Bundle
		b.Restart = w.restartOf(t, pkg, obj.Bundle)
		b.Restart.Auto, b.Restart.Waves = &yes, nil
	}
	seen := map[kube.Key]bool{}
	for _, other := range model.Trust {
		same := other == obj || (obj.Bundle != "" && other.Bundle == obj.Bundle && other.Package == obj.Package)
		node, _ := w.find(other.Resource)
		key := kube.Key{Kind: other.Resource.Kind, Namespace: other.Resource.Namespace, Name: other.Resource.Name}
		if !same || node == nil || seen[key] {
			continue
		}
		seen[key] = true
		changed := other.Resource == obj.Resource
		hash := "sha256:unchanged"
		if changed {
			hash = "sha256:changed"
		}
		b.Targets = append(b.Targets, restart.Target{Key: key, Hash: hash, Changed: changed, Node: byOrig[node]})
	}
	restart.Run([]restart.Bundle{b}, restart.Env{Items: copies, Now: testpki.GoldenNow})
	var out []string
	for i, it := range items {
		if rolled(copies[i]) {
			out = append(out, w.id(kube.RefOf(it)))
		}
	}
	slices.Sort(out)
	return out
}

// rolled reports whether Run wrote a trust-hash into the pod template of
// cp, a copy whose trust-hashes were cleared.
func rolled(cp *yaml.RNode) bool {
	kind, ok := policy.WorkloadKinds().At(cp.GetApiVersion(), cp.GetKind())
	if !ok {
		return false
	}
	tmpl := kube.At(cp, kind.Template...)
	return tmpl != nil && tmpl.GetAnnotations(restart.TrustHashAnnotation)[restart.TrustHashAnnotation] != ""
}

// restartOf returns the restart rules of bundle name of pkg's policy.
func (w *world) restartOf(t *testing.T, pkg *layout.Package, name string) policy.Restart {
	t.Helper()
	if pkg == nil {
		return policy.Restart{}
	}
	for _, node := range pkg.Policies {
		p, err := policy.Decode(node)
		if err != nil {
			continue
		}
		for _, tb := range p.Spec.TrustBundles {
			if tb.Name == name {
				return tb.Restart
			}
		}
	}
	t.Fatalf("no bundle %s in %s", name, pkg.Dir)
	return policy.Restart{}
}

// refused returns the workloads render refuses to read in pkg's scope (a
// rotate-certs.dev/reload value that is no reload class: render fails),
// failing t unless diff reports each as a problem naming it.
func (w *world) refused(t *testing.T, pkg *layout.Package, model *trustdiff.Model) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, e := range restart.NewReaders(w.scope(pkg), restart.ReadersOptions{}).Errors() {
		if e.Role == policy.RoleListed {
			continue
		}
		ref := kube.RefOf(e.Node)
		out[w.id(ref)] = true
		if !slices.ContainsFunc(model.Problems, func(p trustdiff.Problem) bool { return strings.HasPrefix(p.Message, p.File+": "+ref.String()+" ") }) {
			t.Errorf("render refuses %s (%v), diff reports no problem naming it: %q", ref, e.Err, model.Problems)
		}
	}
	return out
}

// readsOnce returns the readers of obj diff counts as reading it once
// and not rolled, among those render reads with it (not those it
// refuses).
func (w *world) readsOnce(obj *trustdiff.TrustObject, pkg *layout.Package, refused map[string]bool) []string {
	var out []string
	for _, c := range obj.Readers {
		if !c.Once || c.Never || refused[resID(c.Resource)] {
			continue
		}
		node := w.byRes[resID(c.Resource)]
		if node == nil || (pkg != nil && w.pkgOf[node] != pkg) {
			continue
		}
		if id := resID(c.Resource); !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
