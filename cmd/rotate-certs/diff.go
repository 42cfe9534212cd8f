package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/diff"
	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/spf13/cobra"
)

// diffOptions are diff's flags.
type diffOptions struct {
	output           string
	now              string
	allowUnexplained bool
	preCommit        bool
}

const diffLong = `diff says in words what a change does to trust, and fails when it breaks or
plants trust: the pull-request gate of a GitOps repository.

BASE and HEAD are git revisions of the repository diff runs in (HEAD defaults
to the working tree), or two directories. PATH limits both revisions to those
paths. Both sides are read by the rules of render and check (packages, hidden
files, .krmignore); a revision is read with the git binary, offline, and
nothing is written to the repository. Use -- before PATHs when HEAD is the
working tree and a PATH could be taken for a revision.

--pre-commit takes BASE and HEAD from pre-commit (its hook's entry): under
pre-commit run --from-ref A --to-ref B, and in a pre-push hook, which set
PRE_COMMIT_FROM_REF and PRE_COMMIT_TO_REF, the change from their merge base
to B (what the range's own commits change); else HEAD and the working tree,
the commit being made. Every argument is then a PATH.

It works with and without RotationPolicies. Trust objects are found as check
finds certificates: Secret and ConfigMap values that hold CAs (not a
certificate's own tls.crt), caBundle fields, ClusterTrustBundles and
trust-manager Bundles' inLine sources. For each one whose CAs change it lists
the CAs added, removed and kept, each with subject, SHA-256, NotAfter and why:
source (a policy's source, or without a policy another object of the tree that
holds it), carried (the object already held it), restored (Copy-mode memory),
or unexplained.

Breaks: a certificate of HEAD (leaf, issuer or intermediate) that verified
through its chain against a trust object its consumers read at BASE and does
not at HEAD; and for a trust object whose CA is replaced, a certificate of the
new CA against the old trust for every consumer that keeps it (reads it once -
env, subPath, reload: never - and is not rolled by the change), and one of the
old CA that is still presented against the new trust. Verified with
crypto/x509 at --now. A trust object nothing reads has no breaks.

Planted: a CA added to a trust object's data that is unexplained, and an edit
of a memory annotation (rotate-certs.dev/retired, unused, previous, seen) that
alters what is trusted or when it leaves and that a render does not make.

Also listed: workloads that roll, Cluster API rollouts, alert rules added or
removed, policy changes. Re-encoding, reordering or re-wrapping PEM is no
change.

Output (-o): table (default), markdown (a pull-request comment, never over
65,000 characters), json (schema rotate-certs.dev/diff/v1, see
docs/reference/diff.md). Certificates appear by subject and SHA-256; no key
material is ever printed.

Exit status:
  0  nothing breaks and nothing is planted (trust may change)
  1  something breaks or is planted (--allow-unexplained makes planted a warning)
  2  usage or input error: a bad flag or argument, a PATH in neither BASE nor
     HEAD, a file the change makes unreadable (nothing is written to stdout).
     A file unreadable at BASE and HEAD alike and unchanged is a warning: the
     verdict stands, and the output lists it as not read`

func newDiffCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff BASE [HEAD] [PATH...]",
		Short: "Say what a change does to trust; fail a pull request that breaks or plants trust",
		Long:  diffLong,
		Example: `  rotate-certs diff origin/main HEAD
  rotate-certs diff main -- clusters/prod
  rotate-certs diff "$BASE_SHA" "$HEAD_SHA" -o markdown > comment.md
  rotate-certs diff ./before ./after -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.preCommit {
				return nil
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd, o, args, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "table", "output format: table, markdown or json")
	f.StringVar(&o.now, "now", "", "verify at this RFC 3339 time or date (2026-11-22) instead of the clock")
	f.BoolVar(&o.allowUnexplained, "allow-unexplained", false, "report planted trust as a warning (exit 0) for a repository whose CAs are edited by hand on purpose")
	f.BoolVar(&o.preCommit, "pre-commit", false, "BASE and HEAD from pre-commit: the range of --from-ref/--to-ref or a push (from its merge base), else HEAD and the working tree; every argument is a PATH")
	return cmd
}

// runDiff turns the arguments into diff.Options and runs the diff: it
// returns what ends the command (diff.Run).
func runDiff(cmd *cobra.Command, o *diffOptions, args []string, stdout, stderr io.Writer) error {
	if !slices.Contains(diff.Formats, o.output) {
		return exit.Misuse(fmt.Errorf("-o %s: want table, markdown or json", kube.Quote(o.output)))
	}
	now, err := parseNow(o.now, time.Now().UTC())
	if err != nil {
		return exit.Misuse(fmt.Errorf("--now: %w", err))
	}
	opts := diff.Options{Dir: ".", Now: now, Format: o.output, AllowUnexplained: o.allowUnexplained,
		Command: "rotate-certs diff " + strings.Join(quoteArgs(args), " ")}
	if o.preCommit {
		opts.Base, opts.Head, err = preCommitSides(".", os.Getenv)
		opts.Paths = args
		opts.Command = "rotate-certs diff " + strings.Join(quoteArgs(append(sideArgs(opts.Base, opts.Head), args...)), " ")
	} else {
		opts.Base, opts.Head, opts.Paths, err = diffSides(".", args, cmd.ArgsLenAtDash())
	}
	if err != nil {
		return exit.Misuse(err)
	}
	return diff.Run(opts, stdout, logFor(cmd, stderr))
}

// preCommitSides are the sides --pre-commit compares: with
// PRE_COMMIT_FROM_REF and PRE_COMMIT_TO_REF (pre-commit run --from-ref
// --to-ref, a pre-push hook) from their merge base to the second; without
// them, HEAD and the working tree (a commit being made: pre-commit has set
// aside what is not staged).
func preCommitSides(dir string, getenv func(string) string) (base, head diff.Side, err error) {
	from, to := getenv("PRE_COMMIT_FROM_REF"), getenv("PRE_COMMIT_TO_REF")
	switch {
	case from == "" && to == "":
		return diff.Side{Rev: "HEAD"}, diff.Side{Dir: dir}, nil
	case from == "" || to == "":
		return base, head, errors.New("--pre-commit: PRE_COMMIT_FROM_REF and PRE_COMMIT_TO_REF are set together (pre-commit run --from-ref A --to-ref B), or neither")
	}
	mb, err := resio.MergeBase(dir, from, to)
	if err != nil {
		return base, head, fmt.Errorf("--pre-commit: PRE_COMMIT_FROM_REF and PRE_COMMIT_TO_REF: %w", err)
	}
	return diff.Side{Rev: mb}, diff.Side{Rev: to}, nil
}

// sideArgs are the arguments that name base and head for a command line.
func sideArgs(base, head diff.Side) []string {
	if head.Rev == "" {
		return []string{base.Rev}
	}
	return []string{base.Rev, head.Rev}
}

// diffSides reads BASE [HEAD] [PATH...]: two directories, or a revision
// then a revision or the working tree, then paths. dash is the number of
// arguments before --, -1 without it.
func diffSides(dir string, args []string, dash int) (base, head diff.Side, paths []string, err error) {
	before := args
	if dash >= 0 {
		before = args[:dash]
	}
	if dash == 0 {
		return base, head, nil, errors.New("BASE comes before --")
	}
	first := args[0]
	if isDir(first) && !resio.IsRevision(dir, first) {
		if len(args) == 2 && dash < 0 && !isDir(args[1]) {
			return base, head, nil, fmt.Errorf("HEAD %s is not a directory: BASE %s is one, so HEAD must be one too", kube.SafePath(args[1]), kube.SafePath(first))
		}
		if len(args) != 2 || dash >= 0 {
			return base, head, nil, fmt.Errorf("BASE %s is a directory: give HEAD as a directory too, and no PATH", kube.SafePath(first))
		}
		return diff.Side{Dir: first}, diff.Side{Dir: args[1]}, nil, nil
	}
	if !resio.IsRevision(dir, first) {
		return base, head, nil, fmt.Errorf("BASE %s is neither a git revision of the repository here nor a directory", kube.Quote(first))
	}
	base, head = diff.Side{Rev: first}, diff.Side{Dir: "."}
	rest := args[1:]
	if len(before) > 1 && resio.IsRevision(dir, before[1]) {
		if _, statErr := os.Stat(before[1]); statErr == nil {
			return base, head, nil, fmt.Errorf("%s is both a revision and a path: put -- before the paths", kube.Quote(before[1]))
		}
		head, rest = diff.Side{Rev: before[1]}, args[2:]
	}
	return base, head, rest, nil
}

// isDir reports whether p is a directory.
func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// quoteArgs quotes what the shell would split or expand.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$`\\*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = kube.Safe(a)
	}
	return out
}
