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
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
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
	ex, errs := explain(set.Items, o.Now)
	tree := trustdiff.Build(trustdiff.Input{Items: set.Items, Explained: ex.Trust, Waves: ex.Waves, File: rel, Policies: ex.policies,
		CertFiles: certFiles(set.CertFiles, rel)})
	tree.Problems = append(append(problems, errs...), tree.Problems...)
	return tree, nil
}

// certFiles are the certificate files no build reads, by their path below
// the top, for the model (kbuild: read as kustomize builds).
func certFiles(files []resio.CertFile, rel func(string) string) map[string]string {
	out := make(map[string]string, len(files))
	for _, f := range files {
		out[rel(f.Path)] = f.SHA256
	}
	return out
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

// explained is what explain found: rotate.Explain's rows for every
// policy, and each policy decoded (the model words them: decoded once).
type explained struct {
	rotate.Explanation
	policies map[*yaml.RNode]*policy.RotationPolicy
}

// explain runs each package's policies (layout.Split: a policy's directory
// and below) and returns why each bundle's targets hold each CA (each row's
// Package its package's directory) and the
// roll-outs in waves not done; a policy that cannot be applied is a
// problem.
func explain(items []*yaml.RNode, now time.Time) (explained, []string) {
	pkgs, _ := layout.Split(items)
	all := explained{policies: map[*yaml.RNode]*policy.RotationPolicy{}}
	var problems []string
	for _, p := range pkgs {
		var rest []*yaml.RNode
		for _, it := range p.Items {
			if !layout.IsPolicy(it) {
				rest = append(rest, it)
			}
		}
		for _, node := range p.Policies {
			pol, err := policy.Decode(node)
			if err != nil {
				err = fmt.Errorf("%s: %w", kube.RefOf(node), err) // as rotate.Explain words it
			} else {
				all.policies[node] = pol
				var e rotate.Explanation
				if e, err = (rotate.Processor{}).ExplainPolicy(rest, node, pol, now); err == nil {
					all.add(e, p.Dir)
					continue
				}
			}
			problems = append(problems, kube.ScrubMessage(fmt.Sprintf("policy %s: %v", kube.RefOf(node), err)))
		}
	}
	return all, problems
}

// add adds the explanation of the package in dir.
func (all *explained) add(e rotate.Explanation, dir string) {
	for _, row := range e.Trust {
		row.Package = dir // its target is the package's, not another's of the same name
		all.Trust = append(all.Trust, row)
	}
	all.Waves = append(all.Waves, e.Waves...)
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
			return readPaths(paths, func(p []string) *resio.Resources { return resio.ReadBuilt(p, nil) }) // kustomizations built
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
	return rev.Top, func() *resio.Resources { return readPaths(paths, rev.ReadBuilt) }, nil // kustomizations built
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
