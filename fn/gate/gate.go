// Package gate is `rotate-certs diff` without its command line: it reads
// the two sides of a change (git revisions of the repository it runs in,
// the working tree, or two directories) by the rules of render and check,
// models each (package trustdiff), compares them, writes the result in the
// chosen format and decides the exit status.
package gate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/pass"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Formats are the output formats (-o).
var Formats = []string{"table", "markdown", "json"}

// Side is one side of a change: a git revision, the working tree, or a
// directory.
type Side struct {
	// Rev is a git revision; "" for a directory.
	Rev string
	// Dir is the directory read when Rev is "" (the working tree: ".").
	Dir string
}

// String names the side for messages.
func (s Side) String() string {
	if s.Rev != "" {
		return kube.Quote(s.Rev)
	}
	return kube.SafePath(s.Dir)
}

// Options is one diff.
type Options struct {
	Base, Head Side
	// Paths limit both sides to these paths (relative to the directory
	// the command runs in); none means everything.
	Paths []string
	// Dir is the directory the command runs in.
	Dir              string
	Now              time.Time
	Format           string
	AllowUnexplained bool
	// Command is the command line that shows the whole result, for a cut
	// markdown comment.
	Command string
}

// Run diffs what o names, writes the result to stdout and its notes and
// warnings through log, and returns what ends the command (an
// *exit.Error, nil when all is well): exit.Failed when something breaks
// or is planted; exit.Usage for a usage or input error - a side that does
// not read, what HEAD does not let it read - which wins over exit.Failed.
func Run(o Options, stdout io.Writer, log exit.Printer) error {
	base, errB := readSide(o, o.Base, log)
	head, errH := readSide(o, o.Head, log)
	if err := errors.Join(errB, errH); err != nil {
		return exit.Misuse(err)
	}
	for _, p := range base.Problems {
		log.Warn("at BASE: " + p)
	}
	res := trustdiff.Compare(base, head, o.Now)
	out, err := write(res, o)
	if err != nil {
		return exit.Misuse(err)
	}
	if _, err := stdout.Write(out); err != nil {
		return exit.Misuse(fmt.Errorf("writing output: %w", err))
	}
	return exitStatus(res, head, o, log)
}

// exitStatus is diff's exit policy: what HEAD does not let it read is a
// usage error (exit.Usage), before a break or planted trust (exit.Failed).
func exitStatus(res trustdiff.Result, head *trustdiff.Tree, o Options, log exit.Printer) error {
	if len(head.Problems) > 0 {
		errs := make([]error, len(head.Problems))
		for i, p := range head.Problems {
			errs[i] = errors.New("at HEAD: " + p)
		}
		return exit.Misuse(errors.Join(errs...))
	}
	planted := len(res.Planted) > 0 && !o.AllowUnexplained
	if len(res.Planted) > 0 && o.AllowUnexplained {
		log.Warn(fmt.Sprintf("%d planted (allowed by --allow-unexplained)", len(res.Planted)))
	}
	if len(res.Breaks) > 0 || planted {
		return exit.Fail(fmt.Errorf("%d break(s), %d planted", len(res.Breaks), len(res.Planted)))
	}
	return nil
}

// write renders res in o.Format.
func write(res trustdiff.Result, o Options) ([]byte, error) {
	switch o.Format {
	case "json":
		return trustdiff.JSON(res)
	case "markdown":
		return []byte(trustdiff.Markdown(res, trustdiff.MarkdownOptions{AllowUnexplained: o.AllowUnexplained, Command: o.Command})), nil
	default:
		return []byte(trustdiff.Table(res, o.AllowUnexplained)), nil
	}
}

// readSide reads one side into its model.
func readSide(o Options, s Side, log exit.Printer) (*trustdiff.Tree, error) {
	root, read, err := reader(o, s, log)
	if err != nil {
		return nil, err
	}
	set := read()
	inRoot := func(m string) string {
		return kube.ScrubMessage(strings.ReplaceAll(m, root+string(filepath.Separator), ""))
	}
	for _, n := range set.Notes {
		log.Note(fmt.Sprintf("%s: %s", s, inRoot(n)))
	}
	rel := relativeTo(root)
	var problems []string
	for _, p := range set.Problems {
		problems = append(problems, inRoot(p.Message))
	}
	pkgs, errs := explain(set.Items, rel, o.Now, seesWhole(o, s))
	tree := trustdiff.Build(trustdiff.Input{Items: set.Items, Packages: pkgs, File: rel})
	tree.Problems = append(append(problems, errs...), tree.Problems...)
	return tree, nil
}

// relativeTo returns the function that shows a file below root.
func relativeTo(root string) func(string) string {
	return func(file string) string {
		if r, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
		return file
	}
}

// explain makes the repository pass over a side's resources: its packages
// (a policy's directory and below), each policy decoded once, the trust
// domains when the side is the whole repository (seesWhole), and each
// package's policies explained - why each bundle's targets hold each CA
// and the roll-outs in waves not done; a policy that cannot be applied is
// a problem. The rules name each package as the result shows it (rel:
// below the top of the tree), the model by its directory as read.
func explain(items []*yaml.RNode, rel func(string) string, now time.Time, whole bool) ([]trustdiff.Package, []string) {
	pkgs, _ := pass.FromItems(items).Split()
	dirs := make([]string, len(pkgs))
	for i, p := range pkgs {
		dirs[i], p.Dir = p.Dir, rel(p.Dir)
	}
	pass.Decode(pkgs)
	var problems []string
	if whole {
		if err := pass.Domains(pkgs, now, nil); err != nil {
			problems = append(problems, kube.ScrubMessage(err.Error()))
		}
	}
	type explained struct {
		pkg      trustdiff.Package
		problems []string
	}
	out := make([]trustdiff.Package, len(pkgs))
	pass.Each(pkgs, 0, func(p *pass.Package, r *resio.Resources, _ error) explained {
		e := explained{pkg: trustdiff.Package{Items: r.Items, Decoded: map[*yaml.RNode]*policy.RotationPolicy{}}}
		for _, x := range p.Explain(layout.WithoutPolicies(r.Items), now) {
			if x.Decoded != nil {
				e.pkg.Decoded[x.Node] = x.Decoded
			}
			if x.Err != nil {
				e.problems = append(e.problems, kube.ScrubMessage(fmt.Sprintf("policy %s: %v", kube.RefOf(x.Node), x.Err)))
				continue
			}
			e.pkg.Trust = append(e.pkg.Trust, x.Trust...)
			e.pkg.Waves = append(e.pkg.Waves, x.Waves...)
		}
		return e
	}, func(i int, e explained) {
		out[i], out[i].Dir = e.pkg, dirs[i]
		problems = append(problems, e.problems...)
	})
	return out, problems
}

// seesWhole reports whether side s is read whole: the top of its
// repository (a directory outside git is its own), with no PATH below it.
// Then a trust domain's every bundle is read, and the side's explanations
// see each domain whole, as a render there does.
func seesWhole(o Options, s Side) bool {
	if s.Rev == "" && s.Dir != "." && s.Dir != "" {
		return resio.IsRepositoryTop(s.Dir)
	}
	for _, p := range o.Paths {
		if filepath.Clean(p) != "." {
			return false
		}
	}
	return resio.IsRepositoryTop(o.Dir)
}

// reader returns the directory a side's files are named below and what
// reads them: a revision read into memory (resio.Revision), or a
// directory on disk.
func reader(o Options, s Side, log exit.Printer) (root string, read func() *resio.Resources, err error) {
	if s.Rev == "" {
		root, err = filepath.Abs(s.Dir)
		if err != nil {
			return "", nil, err
		}
		paths := []string{root}
		if s.Dir == "." || s.Dir == "" {
			root, paths = workTree(o)
		}
		return root, func() *resio.Resources {
			return readPaths(paths, func(p []string) *resio.Resources { return resio.ReadPaths(p, nil) })
		}, nil
	}
	rev, err := resio.ReadRevision(o.Dir, s.Rev)
	if err != nil {
		return "", nil, err
	}
	for _, n := range rev.Notes {
		log.Note(fmt.Sprintf("%s: %s", s, n))
	}
	here := filepath.Join(rev.Top, filepath.FromSlash(rev.Prefix))
	var paths []string
	for _, p := range pathsOrDot(o.Paths) {
		full := filepath.Join(here, p)
		if full != rev.Top && !strings.HasPrefix(full, rev.Top+string(filepath.Separator)) {
			return "", nil, fmt.Errorf("%s is outside the repository", kube.SafePath(p))
		}
		if rev.Has(full) { // else not in this revision: nothing to read there
			paths = append(paths, full)
		}
	}
	return rev.Top, func() *resio.Resources { return readPaths(paths, rev.ReadPaths) }, nil
}

// readPaths reads paths with read; none (none of the paths named is on
// this side) is an empty tree.
func readPaths(paths []string, read func([]string) *resio.Resources) *resio.Resources {
	if len(paths) == 0 {
		return &resio.Resources{}
	}
	return read(paths)
}

// workTree returns the top of the repository o.Dir is in (o.Dir itself
// outside one) and the paths to read of its working tree.
func workTree(o Options) (root string, paths []string) {
	root, _ = filepath.Abs(o.Dir)
	if top, _, err := resio.GitTop(o.Dir); err == nil {
		root = top
	}
	for _, p := range pathsOrDot(o.Paths) {
		full := p
		if !filepath.IsAbs(p) {
			full = filepath.Join(o.Dir, p)
		}
		if _, err := os.Stat(full); err == nil {
			paths = append(paths, full)
		}
	}
	return root, paths
}

// pathsOrDot returns paths, or "." when there are none.
func pathsOrDot(paths []string) []string {
	if len(paths) == 0 {
		return []string{"."}
	}
	return paths
}
