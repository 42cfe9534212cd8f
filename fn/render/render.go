// Package render is `rotate-certs render` on a directory: it reads the tree
// (resio.ScanTree), splits it into packages on the repository pass
// (fn/pass) - one with the policy given on the command line, or every
// package the directory holds - runs the function (rotate.Processor) on
// each package as the pass parses it, and writes back the files whose
// resources changed, all or nothing across packages; or, as a dry run,
// prints the unified diff of what it would write. A package's resources are parsed while it renders and let go
// when its files are encoded: what a render holds is the text of the
// tree, the packages in flight and the files to write.
package render

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/atomicfs"
	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/pass"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/fn/wire"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Options say what to render and where to tell.
type Options struct {
	// PolicyFile is the policy named on the command line (--policy): the
	// directory's top is then rendered with it. "": every package under
	// the directory is rendered with its own policy.
	PolicyFile string
	// DryRun writes nothing (not even the lock file) and prints the
	// unified diff of every file that would change on Stdout.
	DryRun bool
	// Now is the wall clock, for policies without spec.now.
	Now func() time.Time
	// At, when not zero, is the render time (render --now): it wins over
	// the policies' spec.now and the clock.
	At time.Time
	// Kustomization (render --kustomization) lists each file the render
	// creates under resources: of its directory's kustomization; without
	// it, a kustomization that does not list one is warned about.
	Kustomization bool
	// Stdout gets one line per file written ("wrote PATH") or created
	// ("created PATH"), or the diff of a dry run.
	Stdout io.Writer
	// Stderr, the command's printer, gets the notes, the function's
	// warnings and the summary.
	Stderr exit.Printer
	// Workers is how many packages render at once; 0 is one per core
	// (GOMAXPROCS). Whatever it is, the files written, Stdout and Stderr
	// are those of a render of one package after the other. It bounds
	// the memory a render takes beyond the text of the tree and the files
	// to write: Workers packages parsed and rendering at a time.
	Workers int
}

// Render renders dir (see the package comment). It returns nil, or when
// anything failed - then nothing is written anywhere - an exit.Failed
// error that holds every problem (errors.Join), the function's own error
// results among them as it reports them.
func Render(dir string, o Options) error {
	if err := render(dir, o); err != nil {
		return exit.Fail(err)
	}
	return nil
}

func render(dir string, o Options) (err error) {
	var forced *yaml.RNode
	if o.PolicyFile != "" {
		if forced, err = readPolicy(dir, o.PolicyFile); err != nil {
			return err
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if !o.DryRun {
		// One render of a tree at a time: two would read the same files
		// and write them back over each other.
		unlock, err := atomicfs.Lock(dir)
		if err != nil {
			return err
		}
		defer func() {
			if uerr := unlock(); uerr != nil && err == nil {
				err = fmt.Errorf("releasing the lock: %w", uerr)
			}
		}()
		if err := atomicfs.RemoveStale(dir); err != nil {
			return fmt.Errorf("removing what a killed render left: %w", err)
		}
	}
	tree, err := resio.ScanTree(dir, layout.IsPolicy)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, n := range tree.Notes {
		o.Stderr.Note(n)
	}
	pkgs, err := plan(dir, tree, forced, o.Stderr)
	if err != nil {
		return err
	}
	tree.Kept = nil // the packages hold the policies, each until it is rendered
	// Each policy is decoded when its package renders (Processor.Run), not
	// all at once: a fleet's decoded policies held until each renders
	// cost more memory than decoding them did CPU. The domains' pre-pass
	// decodes those that name a domain, and the render takes them.
	// A render anywhere but the repository's top sees each trust domain
	// in part: its bundles warn and keep their previous CAs until they
	// expire.
	if resio.IsRepositoryTop(dir) {
		if err := pass.Domains(pkgs, o.At, o.Now); err != nil {
			return err
		}
	}
	files, err := renderJobs(dir, pkgs, o)
	if err != nil {
		return err
	}
	created, err := createdFiles(dir, files)
	if err != nil {
		return err
	}
	edits, err := kustomizations(dir, files, created, o.Kustomization, o.Stderr)
	if err != nil {
		return err
	}
	files = append(files, edits...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	if o.DryRun {
		return diff(dir, files, o.Stdout)
	}
	return write(dir, files, created, len(pkgs), o)
}

// readPolicy reads the policy of --policy FILE. Inside dir it is one of
// the package's files, as under kpt: it gets its package path so that new
// resources are placed beside it.
func readPolicy(dir, file string) (*yaml.RNode, error) {
	policy, err := resio.ReadPolicyFile(file)
	if err != nil {
		return nil, err
	}
	rel, err := wire.Rel(file, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return policy, nil
	}
	return policy, policy.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, rel))
}

// renderJobs renders every package (renderAll) and returns the files they
// write, sorted by path; any package failing, or two writing one file,
// fails them all.
func renderJobs(dir string, pkgs []*pass.Package, o Options) ([]atomicfs.File, error) {
	var files []atomicfs.File
	var errs []error
	dirs := make([]string, len(pkgs))
	for i, p := range pkgs {
		dirs[i] = p.Dir
	}
	for i, out := range renderAll(dir, pkgs, o) {
		if err := out.err; err != nil {
			if !exit.IsReport(err) && len(pkgs) > 1 {
				err = fmt.Errorf("package %s: %w", kube.SafePath(dirs[i]), err)
			}
			errs = append(errs, err)
			continue
		}
		files = append(files, out.files...)
	}
	if len(errs) > 0 {
		if len(pkgs) > 1 {
			o.Stderr.Print(fmt.Sprintf("%d of %d packages failed; nothing was written", len(errs), len(pkgs)))
		}
		return nil, errors.Join(errs...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	for i := 1; i < len(files); i++ {
		if files[i].Path == files[i-1].Path {
			return nil, fmt.Errorf("%s: two packages write this file; nothing was written", files[i].Path)
		}
	}
	return files, nil
}

// renderPackage runs the function on package p's resources (pkg, parsed
// from its own files, or why they could not be) and returns the files to
// write: only those whose resources changed. Packages render in parallel;
// what the function says goes to stderr, the package's own. The
// package's resources are garbage once it returns: only the files to
// write are left of it.
func renderPackage(dir string, p *pass.Package, pkg *resio.Resources, err error, o Options, stderr io.Writer) ([]atomicfs.File, error) {
	if err != nil {
		return nil, err
	}
	if err := pkg.CheckDuplicateKeys(dir, pkg.Items); err != nil {
		return nil, err
	}
	pol := p.Policies[0]
	proc := rotate.Processor{Now: o.Now, At: o.At, Stderr: stderr, Domains: p.Domains, Package: p.Dir, Decoded: pol.Decoded}
	out, _, err := proc.Run(pol.Node, pkg.Items, nil)
	if err != nil {
		return nil, err
	}
	return pkg.WriteFiles(out)
}

// write writes files under dir all or nothing, and says what it wrote or
// created.
func write(dir string, files []atomicfs.File, created map[string]bool, packages int, o Options) error {
	if err := atomicfs.ReplaceFiles(dir, files); err != nil {
		return err
	}
	for _, f := range files {
		verb := "wrote"
		if created[f.Path] {
			verb = "created"
		}
		fmt.Fprintf(o.Stdout, "%s %s\n", verb, filepath.Join(dir, filepath.FromSlash(f.Path)))
	}
	o.Stderr.Print(summary(packages, len(files), len(created)))
	return nil
}

// plan splits the tree into the packages to render, each with its one
// policy (pass.Source.Split: every directory holding a RotationPolicy is
// one, a deeper one left out of the outer one). With a policy from the
// command line (forced), that policy renders the top of the tree
// (whatever policies the top directory holds) and a deeper policy's
// directory is still a package of its own. The files under no policy are
// left as they are (said on stderr); a policy that would be left so is an
// error. The packages are split by file, so that no package is parsed
// before it renders.
func plan(dir string, tree *resio.Tree, forced *yaml.RNode, stderr exit.Printer) ([]*pass.Package, error) {
	pkgs, rest := pass.FromTree(tree).Split()
	var jobs []*pass.Package
	if forced != nil {
		var top *pass.Package
		var deeper []*pass.Package
		for _, p := range pkgs {
			if p.Dir == "." {
				top = p
			} else {
				deeper = append(deeper, p)
			}
		}
		jobs = []*pass.Package{pass.Join(".", []*yaml.RNode{forced}, top, rest)}
		pkgs, rest = deeper, nil
	}
	if len(jobs) == 0 && len(pkgs) == 0 {
		return nil, fmt.Errorf("no RotationPolicy (apiVersion rotate-certs.dev/v1alpha1) under %s: name one with --policy FILE, or write one with `rotate-certs init %s -o %s`",
			dir, dir, filepath.Join(dir, "rotation-policy.yaml"))
	}
	var errs []error
	for _, p := range pkgs {
		if len(p.Policies) != 1 {
			_, err := (&layout.Package{Dir: p.Dir, Policies: policyNodes(p)}).OnePolicy()
			errs = append(errs, err)
			continue
		}
		// The policy as ScanTree kept it: no item of the package is it
		// (Tree.Read parses the package again), so the function may
		// change either without changing the other.
		jobs = append(jobs, p)
	}
	if rest == nil {
		return jobs, errors.Join(errs...)
	}
	for _, pol := range rest.Policies {
		errs = append(errs, fmt.Errorf("%s: the RotationPolicy %s is in no package and would not be rendered",
			kube.SafePath(layout.FileOf(pol.Node)), kube.Safe(kube.RefOf(pol.Node).Name)))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if n := withResources(tree, rest.Files()); n > 0 {
		stderr.Note(fmt.Sprintf("%d file(s) under %s are in no package (no RotationPolicy in their directory or above): left as they are", n, dir))
	}
	return jobs, nil
}

// policyNodes returns the policies of p.
func policyNodes(p *pass.Package) []*yaml.RNode {
	out := make([]*yaml.RNode, len(p.Policies))
	for i, pol := range p.Policies {
		out[i] = pol.Node
	}
	return out
}

// withResources counts the files of tree among files that hold a
// resource.
func withResources(tree *resio.Tree, files []string) int {
	holds := map[string]bool{}
	for _, f := range tree.Files {
		holds[f.Path] = f.Resources > 0
	}
	n := 0
	for _, f := range files {
		if holds[f] {
			n++
		}
	}
	return n
}

// diff prints the unified diff of every file against what is on disk.
func diff(dir string, files []atomicfs.File, w io.Writer) error {
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
		if _, err := io.WriteString(w, unifiedDiff(name, string(old), string(f.Data), created)); err != nil {
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
