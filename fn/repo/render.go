// Package repo renders a directory of manifests in place, the way
// `rotate-certs render` does: one package with the policy given on the
// command line, or every package the directory holds (package packages),
// all or nothing across them - or, as a dry run, the unified diff of what
// it would write. What one package renders to (which files change, with
// what bytes) is the caller's RenderFunc; this package reads the tree,
// splits it, and writes or shows the result.
package repo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"

	"github.com/rotate-certs/rotate-certs/fn/atomicwrite"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/manifests"
	"github.com/rotate-certs/rotate-certs/fn/packages"
	"github.com/rotate-certs/rotate-certs/fn/unidiff"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// RenderFunc renders one package: items are its resources (paths relative
// to the directory rendered), fnConfig its policy, and original the text
// of every file read (manifests.Tree.Files), by the same paths. It returns
// the files to write (paths relative to the directory), or an error;
// ErrReported when it has already told the user why.
type RenderFunc func(items []*yaml.RNode, fnConfig *yaml.RNode, original map[string][]byte) ([]atomicwrite.File, error)

// ErrReported is an error whose explanation was already printed.
var ErrReported = errors.New("render failed (reported above)")

// Options say what to render and where to tell.
type Options struct {
	// Policy is the policy named on the command line: the whole directory
	// is then one package rendered with it. Nil: every package under the
	// directory is rendered with its own policy.
	Policy *yaml.RNode
	// DryRun writes nothing (not even the lock file) and prints the
	// unified diff of every file that would change on Stdout.
	DryRun bool
	// Stdout gets one line per file written ("wrote PATH") or created
	// ("created PATH"), or the diff of a dry run; Stderr the notes and the
	// summary.
	Stdout, Stderr io.Writer
}

// Render renders dir (see the package comment). On any error nothing is
// written anywhere.
func Render(dir string, o Options, render RenderFunc) (err error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if !o.DryRun {
		// One render of a tree at a time: two would read the same files
		// and write them back over each other.
		unlock, err := atomicwrite.Lock(dir)
		if err != nil {
			return err
		}
		defer func() {
			if uerr := unlock(); uerr != nil && err == nil {
				err = fmt.Errorf("releasing the lock: %w", uerr)
			}
		}()
		if err := atomicwrite.RemoveStale(dir); err != nil {
			return fmt.Errorf("removing what a killed render left: %w", err)
		}
	}
	defer paceCollector()()
	tree, err := manifests.ReadTree(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, n := range tree.Notes {
		fmt.Fprintln(o.Stderr, "rotate-certs render: note: "+n)
	}
	jobs, err := plan(dir, tree.Items, o)
	if err != nil {
		return err
	}
	files, err := renderJobs(jobs, tree.Files, render, o.Stderr)
	if err != nil {
		return err
	}
	if o.DryRun {
		return diff(dir, files, o.Stdout)
	}
	return write(dir, files, len(jobs), o)
}

// paceCollector sets the garbage collector for one render, unless GOGC or
// GOMEMLIMIT are set, and returns what restores it. A render keeps every
// resource it read until it has written the files, so nearly all it
// allocates while reading stays live, and at Go's default (a collection
// each time the heap doubled) the collector marks the same resources again
// and again: at 200% it runs half as often, for a peak about a third
// higher (docs/design/performance.md).
func paceCollector() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(200)
	return func() { debug.SetGCPercent(old) }
}

// renderJobs renders every package and returns the files they write,
// sorted by path; any package failing, or two writing one file, fails
// them all.
func renderJobs(jobs []job, original map[string][]byte, render RenderFunc, stderr io.Writer) ([]atomicwrite.File, error) {
	var files []atomicwrite.File
	var failed []error
	for _, j := range jobs {
		fs, err := render(j.items, j.policy, original)
		if err != nil {
			if !errors.Is(err, ErrReported) && len(jobs) > 1 {
				err = fmt.Errorf("package %s: %w", kube.SafePath(j.dir), err)
			}
			failed = append(failed, err)
			continue
		}
		files = append(files, fs...)
	}
	if len(failed) > 0 {
		if len(jobs) > 1 {
			fmt.Fprintf(stderr, "rotate-certs render: %d of %d packages failed; nothing was written\n", len(failed), len(jobs))
		}
		return nil, errors.Join(failed...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for i := 1; i < len(files); i++ {
		if files[i].Path == files[i-1].Path {
			return nil, fmt.Errorf("%s: two packages write this file; nothing was written", files[i].Path)
		}
	}
	return files, nil
}

// write writes files under dir all or nothing, and says what it wrote or
// created.
func write(dir string, files []atomicwrite.File, packages int, o Options) error {
	created := map[string]bool{}
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f.Path))); errors.Is(err, fs.ErrNotExist) {
			created[f.Path] = true
		}
	}
	if err := atomicwrite.Write(dir, files); err != nil {
		return err
	}
	for _, f := range files {
		verb := "wrote"
		if created[f.Path] {
			verb = "created"
		}
		fmt.Fprintf(o.Stdout, "%s %s\n", verb, filepath.Join(dir, filepath.FromSlash(f.Path)))
	}
	fmt.Fprintln(o.Stderr, "rotate-certs render: "+summary(packages, len(files), len(created)))
	return nil
}

// job is one package to render.
type job struct {
	dir    string
	items  []*yaml.RNode
	policy *yaml.RNode
}

// plan splits the tree into the packages to render: every directory
// holding a RotationPolicy is one, a deeper one left out of the outer one.
// With a policy from the command line, that policy renders the top of the
// tree (whatever policies the top directory holds) and a deeper policy's
// directory is still a package of its own. The files under no policy are
// left as they are (said on stderr); a policy that would be left so is an
// error.
func plan(dir string, items []*yaml.RNode, o Options) ([]job, error) {
	pkgs, rest := packages.Split(items)
	var jobs []job
	if o.Policy != nil {
		var nested []*packages.Package
		inNested := map[*yaml.RNode]bool{}
		for _, p := range pkgs {
			if p.Dir != "." {
				nested = append(nested, p)
				for _, it := range p.Items {
					inNested[it] = true
				}
			}
		}
		var top []*yaml.RNode
		for _, it := range items {
			if !inNested[it] {
				top = append(top, it)
			}
		}
		jobs, pkgs, rest = []job{{dir: ".", items: top, policy: o.Policy}}, nested, nil
	}
	if len(jobs) == 0 && len(pkgs) == 0 {
		return nil, fmt.Errorf("no RotationPolicy (apiVersion rotate-certs.dev/v1alpha1) under %s: name one with --policy FILE, or write one with `rotate-certs init %s -o %s`",
			dir, dir, filepath.Join(dir, "rotation-policy.yaml"))
	}
	var errs []error
	for _, p := range pkgs {
		pol, err := p.OnePolicy()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		jobs = append(jobs, job{dir: p.Dir, items: p.Items, policy: pol.Copy()})
	}
	for _, it := range rest {
		if packages.IsPolicy(it) {
			errs = append(errs, fmt.Errorf("%s: the RotationPolicy %s is in no package and would not be rendered",
				kube.SafePath(packages.FileOf(it)), kube.Safe(kube.RefOf(it).Name)))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if n := len(filesOf(rest)); n > 0 {
		fmt.Fprintf(o.Stderr, "rotate-certs render: note: %d file(s) under %s are in no package (no RotationPolicy in their directory or above): left as they are\n", n, dir)
	}
	return jobs, nil
}

func filesOf(items []*yaml.RNode) map[string]bool {
	out := map[string]bool{}
	for _, it := range items {
		if f, _ := kube.FileOf(it); f != "" {
			out[f] = true
		}
	}
	return out
}

// diff prints the unified diff of every file against what is on disk.
func diff(dir string, files []atomicwrite.File, w io.Writer) error {
	for _, f := range files {
		old, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		created := errors.Is(err, fs.ErrNotExist)
		if err != nil && !created {
			return err
		}
		// Paths as seen from the working directory, so that git apply
		// and patch -p1 take the diff there; from dir when it is absolute.
		name := f.Path
		if !filepath.IsAbs(dir) {
			name = filepath.ToSlash(filepath.Join(dir, filepath.FromSlash(f.Path)))
		}
		if _, err := io.WriteString(w, unidiff.Diff(name, string(old), string(f.Data), created, false)); err != nil {
			return err
		}
	}
	return nil
}

func summary(pkgs, files, created int) string {
	p := plural(pkgs, "package")
	if files == 0 {
		return fmt.Sprintf("rendered %s: nothing changed", p)
	}
	return fmt.Sprintf("rendered %s: %s written, %d of them created", p, plural(files, "file"), created)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
