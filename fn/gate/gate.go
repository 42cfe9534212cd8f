// Package gate is `rotate-certs diff` without its command line: it reads
// the two sides of a change (git revisions of the repository it runs in,
// the working tree, or two directories) by the rules of render and check,
// models each (package trustdiff), compares them, writes the result in the
// chosen format and decides the exit status.
package gate

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Exit statuses: 0 nothing breaks and nothing is planted; 1 something
// breaks or is planted; 2 a usage or input error.
const (
	OK      = 0
	Failing = 1
	Usage   = 2
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

// Run diffs what o names, writes the result to stdout and notes and
// errors to stderr (each line prefixed "diff: "), and returns the exit
// status.
func Run(o Options, stdout, stderr io.Writer) int {
	base, errB := readSide(o, o.Base, stderr)
	head, errH := readSide(o, o.Head, stderr)
	for _, e := range []error{errB, errH} {
		if e != nil {
			fmt.Fprintf(stderr, "diff: %s\n", kube.ScrubMessage(e.Error()))
			return Usage
		}
	}
	for _, p := range base.Problems {
		fmt.Fprintf(stderr, "diff: warning: at BASE: %s\n", p)
	}
	res := trustdiff.Compare(base, head, o.Now)
	out, err := write(res, o)
	if err != nil {
		fmt.Fprintf(stderr, "diff: %v\n", err)
		return Usage
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "diff: writing output: %v\n", err)
		return Usage
	}
	return exitStatus(res, head, o, stderr)
}

// exitStatus is diff's exit policy: what HEAD does not let it read is a
// usage error (2), before a break or planted trust (1).
func exitStatus(res trustdiff.Result, head *trustdiff.Tree, o Options, stderr io.Writer) int {
	if len(head.Problems) > 0 {
		for _, p := range head.Problems {
			fmt.Fprintf(stderr, "diff: at HEAD: %s\n", p)
		}
		return Usage
	}
	planted := len(res.Planted) > 0 && !o.AllowUnexplained
	if len(res.Planted) > 0 && o.AllowUnexplained {
		fmt.Fprintf(stderr, "diff: warning: %d planted (allowed by --allow-unexplained)\n", len(res.Planted))
	}
	if len(res.Breaks) > 0 || planted {
		fmt.Fprintf(stderr, "diff: %d break(s), %d planted\n", len(res.Breaks), len(res.Planted))
		return Failing
	}
	return OK
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
func readSide(o Options, s Side, stderr io.Writer) (*trustdiff.Tree, error) {
	root, paths, cleanup, err := materialize(o, s, stderr)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	set := &resio.Resources{}
	if len(paths) > 0 { // none of the paths named is on this side: an empty tree
		set = resio.ReadPaths(paths, nil)
	}
	for _, n := range set.Notes {
		fmt.Fprintf(stderr, "diff: note: %s: %s\n", s, kube.ScrubMessage(n))
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
func materialize(o Options, s Side, stderr io.Writer) (root string, paths []string, cleanup func(), err error) {
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
		fmt.Fprintf(stderr, "diff: note: %s: %s\n", s, n)
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
