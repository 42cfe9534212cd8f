// Package diff is `rotate-certs diff` without its command line: it reads
// the two sides of a change (git revisions of the repository it runs in,
// the working tree, or two directories) by the rules of render and check,
// models each (package trustdiff), compares them, writes the result in the
// chosen format and decides the exit status.
package diff

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/anchors"
	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/handover"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/pass"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
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
	switch {
	case s.Rev != "":
		return kube.Quote(s.Rev)
	case s.Dir == "." || s.Dir == "":
		return "the working tree"
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
	// alone reads each side on its own, sharing nothing between them
	// (resio.Shared, lending): what the tests compare the shared
	// reading with.
	alone bool
}

// Run diffs what o names, writes the result to stdout and its notes and
// warnings through log, and returns what ends the command (an
// *exit.Error, nil when all is well): exit.Failed when something breaks
// or is planted; exit.Usage, with nothing on stdout, for a usage or input
// error - a side that does not read, a PATH on neither side, what HEAD
// does not let it read (problems) - which wins over exit.Failed.
func Run(o Options, stdout io.Writer, log exit.Printer) error {
	base, errB := open(o, o.Base, log)
	head, errH := open(o, o.Head, log)
	if err := errors.Join(errB, errH); err != nil {
		return exit.Misuse(err)
	}
	if err := pathsExist(o, base, head); err != nil {
		return exit.Misuse(err)
	}
	bt, ht, err := models(o, base, head, log)
	if err != nil {
		return exit.Misuse(err)
	}
	incomplete, fatal := judgeProblems(bt.Problems, ht.Problems, base, head)
	for _, p := range bt.Problems {
		if !slices.ContainsFunc(incomplete, func(i trustdiff.Incomplete) bool { return i.File == p.File && i.Reason == p.Message }) {
			log.Warn("at BASE: " + p.Message)
		}
	}
	if len(fatal) > 0 {
		return exit.Misuse(errors.Join(fatal...))
	}
	for _, i := range incomplete {
		log.Warn(fmt.Sprintf("not read at BASE or HEAD, and unchanged (the verdict does not cover it): %s", i.Reason))
	}
	res := trustdiff.Compare(bt, ht, o.Now)
	res.Incomplete = incomplete
	out, err := write(res, o)
	if err != nil {
		return exit.Misuse(err)
	}
	if _, err := stdout.Write(out); err != nil {
		return exit.Misuse(fmt.Errorf("writing output: %w", err))
	}
	return exitStatus(res, o, log)
}

// models reads each side into its model, one side at a time (a fleet's
// pull request holds one side's objects at a time, not two), and lends
// HEAD what BASE made of what the change left alone: each unchanged
// file's objects (resio.Shared: the same nodes on both sides), each
// package made of them explained (lending), what the model read of each
// object (trustdiff.Memo) and each signature checked (anchors.Verified).
// Objects that share a name in one directory on either side are told
// apart by file on both (trustdiff.Ambiguous); when HEAD has such names
// BASE has not - the change adds a duplicate - BASE is read again, quietly,
// and modelled with them.
func models(o Options, base, head *opened, log exit.Printer) (bt, ht *trustdiff.Model, err error) {
	sh, seen := resio.NewShared(), &lending{verified: anchors.NewVerified(), memo: trustdiff.NewMemo()}
	if o.alone {
		sh, seen = nil, &lending{alone: true}
	}
	bs, err := base.load(log, sh)
	if err != nil {
		return nil, nil, err
	}
	dupsB := trustdiff.Duplicates(bs.Items, base.rel())
	bt = base.model(bs, o, trustdiff.Ambiguous(dupsB), seen)
	hs, err := head.load(log, sh)
	if err != nil {
		return nil, nil, err
	}
	dupsH := trustdiff.Duplicates(hs.Items, head.rel())
	for _, d := range dupsH {
		log.Warn("at HEAD: " + kube.ScrubMessage(d.String()))
	}
	ambiguous := trustdiff.Ambiguous(dupsB, dupsH)
	if len(ambiguous) > len(trustdiff.Ambiguous(dupsB)) {
		again, err := base.load(exit.NewPrinter(io.Discard, ""), sh)
		if err != nil {
			return nil, nil, err
		}
		bt = base.model(again, o, ambiguous, seen)
	}
	seen.only(hs.Items)
	return bt, head.model(hs, o, ambiguous, seen), nil
}

// judgeProblems sorts what HEAD does not let diff read: a problem of a
// file that BASE has too, the file unchanged, leaves the verdict on the
// rest standing (incomplete: the change cannot have altered what the file
// holds); any other - a file the change made unreadable or changed while
// unreadable, an object the change broke - is fatal.
func judgeProblems(base, head []trustdiff.Problem, bs, hs *opened) (incomplete []trustdiff.Incomplete, fatal []error) {
	for _, p := range head {
		var changed []string
		if p.File != "" {
			changed = bs.changed(hs, p.File)
		}
		if p.File != "" && slices.Contains(base, p) && len(changed) == 0 {
			incomplete = append(incomplete, trustdiff.Incomplete{File: p.File, Reason: p.Message})
			continue
		}
		fatal = append(fatal, errors.New("at HEAD: "+withInputs(p, changed)))
	}
	return incomplete, fatal
}

// withInputs is problem p's message naming the files its build read that
// the change altered (changed, p.File aside): a kustomization the change
// did not touch fails for a file it did, and the reviewer is told which,
// and how to go on when the build fails on both sides.
func withInputs(p trustdiff.Problem, changed []string) string {
	inputs := slices.DeleteFunc(slices.Clone(changed), func(f string) bool { return f == p.File })
	if len(inputs) == 0 {
		return p.Message
	}
	rest, ok := strings.CutPrefix(p.Message, p.File+": ")
	if !ok {
		return p.Message
	}
	return fmt.Sprintf("%s: its build reads %s, changed in this change; "+
		"fix the build, or leave its directory out (.krmignore) to have the rest judged: %s",
		p.File, strings.Join(inputs, " and "), rest)
}

// exitStatus is diff's exit policy for a change it could read: a break or
// planted trust fails it (exit.Failed).
func exitStatus(res trustdiff.Result, o Options, log exit.Printer) error {
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

// load reads side s's resources and tells its notes. A commit's files are
// read from git for the read and let go after it (resio.Revision's Load
// and Release): what the side is made of is then its nodes, and a side
// not yet read holds nothing.
func (s *opened) load(log exit.Printer, sh *resio.Shared) (*resio.Resources, error) {
	if s.rev != nil {
		if err := s.rev.Load(); err != nil {
			return nil, fmt.Errorf("%s: %w", s.side, err)
		}
		defer s.rev.Release()
	}
	set := s.read(sh)
	for _, n := range set.Notes {
		log.Note(fmt.Sprintf("%s: %s", s.side, s.inRoot(n)))
	}
	rel := s.rel()
	s.builds = map[string][]string{}
	for _, b := range set.Builds {
		for _, f := range b.Read {
			s.builds[rel(b.File)] = append(s.builds[rel(b.File)], rel(f))
		}
	}
	return set, nil
}

// inRoot is message m with the side's files named below its root.
func (s *opened) inRoot(m string) string {
	return kube.ScrubMessage(strings.ReplaceAll(m, s.root+string(filepath.Separator), ""))
}

// rel returns the function that shows a file of the side below its root.
func (s *opened) rel() func(string) string { return relativeTo(s.root) }

// model maps set, the side's resources, onto its model; what it could not
// read is in the model's Problems, each with its file. ambiguous are the
// names several objects share in one directory on either side.
func (s *opened) model(set *resio.Resources, o Options, ambiguous map[string]bool, seen *lending) *trustdiff.Model {
	rel := s.rel()
	var problems []trustdiff.Problem
	for _, p := range set.Problems {
		file := ""
		if p.Path != "" {
			file = kube.SafePath(rel(p.Path))
		}
		problems = append(problems, trustdiff.Problem{File: file, Message: s.inRoot(p.Message)})
	}
	pkgs, errs := explain(set.Items, rel, o.Now, seesWhole(o, s.side), seen)
	tree := trustdiff.Build(trustdiff.Input{Items: set.Items, Packages: pkgs, File: rel, Ambiguous: ambiguous,
		CertFiles: certFiles(set.CertFiles, rel), Memo: seen.memo})
	tree.Problems = append(append(problems, errs...), tree.Problems...)
	return tree
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

// explain makes the repository pass over a side's resources: its packages
// (a policy's directory and below), each policy decoded once, the trust
// domains when the side is the whole repository (seesWhole), and each
// package's policies explained - why each bundle's targets hold each CA
// and the roll-outs in waves not done; a policy that cannot be applied is
// a problem. The rules name each package as the result shows it (rel:
// below the top of the tree), the model by its directory as read. A
// package the side before explained alike (seen) is taken from it.
func explain(items []*yaml.RNode, rel func(string) string, now time.Time, whole bool, seen *lending) ([]trustdiff.Package, []trustdiff.Problem) {
	pkgs, _ := pass.FromItems(items).Split()
	dirs := make([]string, len(pkgs))
	for i, p := range pkgs {
		dirs[i], p.Dir, p.Verified = p.Dir, rel(p.Dir), seen.verified
	}
	seen.decoded(pkgs)
	pass.Decode(pkgs)
	var problems []trustdiff.Problem
	if whole {
		if err := pass.Domains(pkgs, now, nil); err != nil {
			problems = append(problems, trustdiff.Problem{Message: kube.ScrubMessage(err.Error())})
		}
	}
	out := make([]trustdiff.Package, len(pkgs))
	pass.Each(pkgs, 0, func(p *pass.Package, r *resio.Resources, _ error) explained {
		if e, ok := seen.take(p, r.Items); ok {
			return e
		}
		e := explainPackage(p, r.Items, rel, now)
		e.dir = p.Dir
		return e
	}, func(i int, e explained) {
		seen.keep(e)
		out[i], out[i].Dir = e.pkg, dirs[i]
		problems = append(problems, e.problems...)
	})
	seen.done()
	return out, problems
}

// explained is one package explained.
type explained struct {
	// dir is the package's directory as the result shows it.
	dir      string
	pkg      trustdiff.Package
	problems []trustdiff.Problem
}

// explainPackage explains package p of items.
func explainPackage(p *pass.Package, items []*yaml.RNode, rel func(string) string, now time.Time) explained {
	e := explained{pkg: trustdiff.Package{Items: items, Decoded: map[*yaml.RNode]*policy.RotationPolicy{}}}
	for _, x := range p.Explain(layout.WithoutPolicies(items), now) {
		if x.Decoded != nil {
			e.pkg.Decoded[x.Node] = x.Decoded
		}
		if x.Err != nil {
			ref := kube.RefOf(x.Node)
			e.problems = append(e.problems, trustdiff.Problem{File: kube.SafePath(rel(ref.Path)),
				Message: kube.ScrubMessage(fmt.Sprintf("policy %s: %v", ref, inFiles(x.Err, items, rel)))})
			continue
		}
		e.pkg.Trust = append(e.pkg.Trust, x.Trust...)
		e.pkg.Waves = append(e.pkg.Waves, x.Waves...)
	}
	return e
}

// lending is what one side lends the other. Its packages explained: a
// package of the same directory (as the result shows it) made of the same
// resources - the same nodes, which only a file of the same path and text
// on both sides gives (resio.Shared) - and of no trust domain is the same
// package at the same time, and its explanation the same. A package of a
// domain is explained again: its domain is every package's, and another
// package may have changed it. What the side before explained is read on
// every core while a side is explained (take), what this side explains
// kept on the caller's goroutine (keep): two maps (handover.Map). And what
// its model read of each object and the signatures its explanations
// checked.
type lending struct {
	// packages are the packages explained, by directory.
	packages handover.Map[string, explained]
	// verified are the signature checks of every package of both sides.
	verified *anchors.Verified
	// memo is what the model of one side read of each object, for the
	// other's.
	memo *trustdiff.Memo
	// alone lends nothing (Options.alone).
	alone bool
}

// take returns the explanation of package p of items the side before
// made, ok false when there is none to take.
func (x *lending) take(p *pass.Package, items []*yaml.RNode) (explained, bool) {
	e, ok := x.packages.Before(p.Dir)
	if !ok || !slices.Equal(e.pkg.Items, items) {
		return explained{}, false
	}
	for _, pol := range p.Policies {
		if pol.Decoded != nil && pol.Decoded.InDomain() {
			return explained{}, false
		}
	}
	return e, true
}

// decoded gives the policies of pkgs the side before decoded - the same
// nodes - their decoded form, so that each is decoded once.
func (x *lending) decoded(pkgs []*pass.Package) {
	for _, p := range pkgs {
		e, ok := x.packages.Before(p.Dir)
		if !ok {
			continue
		}
		for i, pol := range p.Policies {
			if d := e.pkg.Decoded[pol.Node]; d != nil {
				p.Policies[i].Decoded = d
			}
		}
	}
}

// keep records package e for the side after this one.
func (x *lending) keep(e explained) {
	if x.alone {
		return
	}
	x.packages.Keep(e.dir, e)
}

// only forgets what the side before made that the next side, of items,
// cannot take: a package with an object not among items, and what the
// model read of such an object. A pull request over a fleet rewrites a
// file in every cluster: what BASE made of each would be held while HEAD
// is explained and modelled, for nothing.
func (x *lending) only(items []*yaml.RNode) {
	keep := make(map[*yaml.RNode]bool, len(items))
	for _, item := range items {
		keep[item] = true
	}
	holds := func(item *yaml.RNode) bool { return keep[item] }
	x.packages.Only(func(_ string, e explained) bool {
		return !slices.ContainsFunc(e.pkg.Items, func(item *yaml.RNode) bool { return !holds(item) })
	})
	x.memo.Only(holds)
}

// done ends a side: what it explained is what the next side is lent.
func (x *lending) done() { x.packages.Done() }

// inFiles is err with the files its results name (the path annotations
// of items, as messages show them: kube.SafePath) shown below the top of
// the side (rel), as every other line names them: by the side's own path,
// a problem of a policy that two directories hold alike would differ
// between them, and be fatal. A name that two files of items share stays
// as it was.
func inFiles(err error, items []*yaml.RNode, rel func(string) string) error {
	results, ok := err.(kube.ErrorResults)
	if !ok {
		return err
	}
	below := map[string]string{}
	for _, item := range items {
		path := kube.RefOf(item).Path
		shown, short := kube.SafePath(path), kube.SafePath(rel(path))
		if had, seen := below[shown]; seen && had != short {
			short = shown
		}
		below[shown] = short
	}
	out := make(kube.ErrorResults, len(results))
	for i, r := range results {
		named := *r
		if r.File != nil && below[r.File.Path] != "" {
			named.File = &framework.File{Path: below[r.File.Path], Index: r.File.Index}
		}
		out[i] = &named
	}
	return out
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

// opened is one side of a change, ready to read: a revision read into
// memory (resio.Revision), or a directory on disk.
type opened struct {
	side Side
	// root is the directory the side's files are named below.
	root string
	// read reads the side's resources (the PATHs on this side).
	read func(sh *resio.Shared) *resio.Resources
	// exists reports whether a PATH the user named is on this side.
	exists func(p string) bool
	// file returns the content of a file below root (a slash path), ok
	// false when the side does not hold it.
	file func(rel string) (data []byte, ok bool)
	// builds are, by kustomization file (below root), the files its
	// build read: what a problem of the build depends on.
	builds map[string][]string
	// rev is the commit a revision side reads, nil for a directory.
	rev *resio.Revision
}

// changed lists what a problem of file rel depends on and the change
// altered: rel itself, and when rel is a kustomization every file its
// build read on either side, each once, in that order. Empty: the problem
// is the same on both sides (a changed generator input breaks a build
// whose kustomization is unchanged).
func (s *opened) changed(other *opened, rel string) []string {
	var out []string
	for _, f := range append(append([]string{rel}, s.builds[rel]...), other.builds[rel]...) {
		a, okA := s.file(f)
		b, okB := other.file(f)
		if (!okA || !okB || !bytes.Equal(a, b)) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// open opens side s of o: its files, the PATHs of o on it.
func open(o Options, s Side, log exit.Printer) (*opened, error) {
	if s.Rev == "" {
		return openDir(o, s)
	}
	rev, err := resio.OpenRevision(o.Dir, s.Rev)
	if err != nil {
		return nil, err
	}
	for _, n := range rev.Notes {
		log.Note(fmt.Sprintf("%s: %s", s, n))
	}
	here := filepath.Join(rev.Top, filepath.FromSlash(rev.Prefix))
	var paths []string
	for _, p := range pathsOrDot(o.Paths) {
		full := filepath.Join(here, p)
		if full != rev.Top && !strings.HasPrefix(full, rev.Top+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s is outside the repository", kube.SafePath(p))
		}
		if rev.Has(full) { // else nothing to read there
			paths = append(paths, full)
		}
	}
	return &opened{side: s, root: rev.Top, rev: rev,
		read: func(sh *resio.Shared) *resio.Resources { // kustomizations built
			return readPaths(paths, func(p []string) *resio.Resources { return rev.ReadBuiltShared(p, sh) })
		},
		exists: func(p string) bool { return rev.Exists(filepath.Join(here, p)) },
		file:   func(rel string) ([]byte, bool) { return rev.ReadFile(filepath.Join(rev.Top, filepath.FromSlash(rel))) },
	}, nil
}

// openDir opens a directory side: the working tree (the top of the
// repository o.Dir is in, o.Dir itself outside one; the PATHs below
// o.Dir), or a directory named as BASE or HEAD (no PATHs).
func openDir(o Options, s Side) (*opened, error) {
	root, err := filepath.Abs(s.Dir)
	if err != nil {
		return nil, err
	}
	paths, here := []string{root}, root
	if s.Dir == "." || s.Dir == "" {
		here, _ = filepath.Abs(o.Dir)
		root, paths = workTree(o)
	}
	return &opened{side: s, root: root,
		read: func(sh *resio.Shared) *resio.Resources { // kustomizations built
			return readPaths(paths, func(p []string) *resio.Resources { return resio.ReadBuiltShared(p, sh) })
		},
		exists: func(p string) bool {
			if !filepath.IsAbs(p) {
				p = filepath.Join(here, p)
			}
			return onDisk(p)
		},
		file: func(rel string) ([]byte, bool) {
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
			return data, err == nil
		},
	}, nil
}

// pathsExist fails closed on a PATH that is on neither side: it would
// compare nothing, and a typo in a gate's paths would pass every change.
func pathsExist(o Options, base, head *opened) error {
	var errs []error
	for _, p := range o.Paths {
		if base.exists(p) || head.exists(p) {
			continue
		}
		msg := fmt.Sprintf("PATH %s is neither in BASE %s nor in HEAD %s", kube.SafePath(p), base.side, head.side)
		if head.side.Rev == "" {
			msg = fmt.Sprintf("%s is neither a revision of the repository nor a path in BASE %s or in the working tree", kube.Quote(p), base.side)
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
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
		if onDisk(full) {
			paths = append(paths, full)
		}
	}
	return root, paths
}

// onDisk reports whether p is on disk (a dangling link included).
func onDisk(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// pathsOrDot returns paths, or "." when there are none.
func pathsOrDot(paths []string) []string {
	if len(paths) == 0 {
		return []string{"."}
	}
	return paths
}
