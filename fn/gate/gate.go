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
	root, paths, cleanup, err := materialize(o, s, log)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	set := &resio.Resources{}
	if len(paths) > 0 { // none of the paths named is on this side: an empty tree
		set = resio.ReadPaths(paths, nil)
	}
	for _, n := range set.Notes {
		log.Note(fmt.Sprintf("%s: %s", s, n))
	}
	rel := relativeTo(root)
	var problems []string
	for _, p := range set.Problems {
		problems = append(problems, kube.ScrubMessage(strings.ReplaceAll(p.Message, root+string(filepath.Separator), "")))
	}
	ex, errs := explain(set.Items, o.Now)
	tree := trustdiff.Build(trustdiff.Input{Items: set.Items, Explained: ex.Trust, Waves: ex.Waves, File: rel})
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

// explain runs each package's policies (layout.Split: a policy's directory
// and below) and returns why each bundle's targets hold each CA (each row's
// Package its package's directory) and the
// roll-outs in waves not done; a policy that cannot be applied is a
// problem.
func explain(items []*yaml.RNode, now time.Time) (rotate.Explanation, []string) {
	pkgs, _ := layout.Split(items)
	var all rotate.Explanation
	var problems []string
	for _, p := range pkgs {
		var rest []*yaml.RNode
		for _, it := range p.Items {
			if !layout.IsPolicy(it) {
				rest = append(rest, it)
			}
		}
		for _, pol := range p.Policies {
			e, err := rotate.Explain(rest, pol, now)
			if err != nil {
				problems = append(problems, kube.ScrubMessage(fmt.Sprintf("policy %s: %v", kube.RefOf(pol), err)))
				continue
			}
			for _, row := range e.Trust {
				row.Package = p.Dir // its target is the package's, not another's of the same name
				all.Trust = append(all.Trust, row)
			}
			all.Waves = append(all.Waves, e.Waves...)
		}
	}
	return all, problems
}

// materialize returns the directory a side is read from and the paths to
// read in it: a revision written to a temporary directory (cleanup removes
// it), or a directory as it is.
func materialize(o Options, s Side, log exit.Printer) (root string, paths []string, cleanup func(), err error) {
	cleanup = func() {}
	if s.Rev == "" {
		root, err = filepath.Abs(s.Dir)
		if err != nil {
			return "", nil, cleanup, err
		}
		if s.Dir == "." || s.Dir == "" {
			root, paths = workTree(o)
			return root, paths, cleanup, nil
		}
		return root, []string{root}, cleanup, nil
	}
	rev, err := resio.ReadRevision(o.Dir, s.Rev)
	if err != nil {
		return "", nil, cleanup, err
	}
	for _, n := range rev.Notes {
		log.Note(fmt.Sprintf("%s: %s", s, n))
	}
	here := filepath.Join(rev.Dir, filepath.FromSlash(rev.Prefix))
	for _, p := range pathsOrDot(o.Paths) {
		full := filepath.Join(here, p)
		if full != rev.Dir && !strings.HasPrefix(full, rev.Dir+string(filepath.Separator)) {
			_ = rev.Close()
			return "", nil, cleanup, fmt.Errorf("%s is outside the repository", kube.SafePath(p))
		}
		if _, err := os.Stat(full); err != nil {
			continue // not in this revision: nothing to read there
		}
		paths = append(paths, full)
	}
	return rev.Dir, paths, func() { _ = rev.Close() }, nil
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
