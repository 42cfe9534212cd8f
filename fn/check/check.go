// Package check is `rotate-certs check` without its command line: it reads
// the manifests a user names, splits them into packages by their
// RotationPolicies, resolves the expiry thresholds, builds the expiry and
// re-issue report, writes it in the chosen format, and decides the exit
// status. The command only parses flags and calls Run.
package check

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/inventory"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/pass"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/report"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/fn/why"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Formats are the output formats Run writes (-o).
var Formats = []string{"table", "wide", "json", "svg"}

// Options is one check: what to read, when, and how to write the report.
type Options struct {
	// Paths are files, directories or "-" for Stdin; none means ".".
	Paths []string
	Stdin io.Reader
	// Now is the time the report is evaluated at.
	Now time.Time
	// PolicyFile, when set, is the one RotationPolicy all the input is
	// checked with, as one package.
	PolicyFile string
	// WarnWithin and FailWithin are the thresholds as the user wrote them
	// (720h, 30d); nil leaves them to the policies or the defaults.
	WarnWithin, FailWithin *string
	// Format is one of Formats; Color and NoHeaders apply to table and wide.
	Format    string
	Color     bool
	NoHeaders bool
}

// Run checks what o names, writes the report to stdout and notes to log,
// and returns what ends the command (an *exit.Error, nil when all is
// well): exit.Failed when something is inside the fail window or expired;
// exit.Usage for a usage or input error - also input check could not
// read, since a gate must not pass on what it did not see - which wins
// over exit.Failed. Its message is the input errors, a line each, and a
// summary line, printed after the report.
func Run(o Options, stdout io.Writer, log exit.Printer) error {
	paths := o.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	in := &inputErrors{}
	// Read as text, each package parsed when its report is built and let
	// go after (the pass), kustomizations built as the cluster gets them:
	// what check holds is the text of its input, what it built and the
	// report, not every resource parsed.
	tree := resio.ScanBuilt(paths, o.Stdin, layout.IsPolicy)
	for _, n := range tree.Notes {
		log.Note(n)
	}
	var forced *yaml.RNode
	if o.PolicyFile != "" {
		node, err := resio.ReadPolicyFile(o.PolicyFile)
		if err != nil {
			in.errorf("--policy: %v", err)
		} else {
			forced = node
		}
	}
	groups := splitPackages(pass.FromTree(tree), forced)
	tree.Kept = nil // the packages hold the policies
	pass.Decode(packages(groups))

	warn, fail, err := resolveThresholds(groups, o.WarnWithin, o.FailWithin, log)
	if err != nil {
		return exit.Misuse(err)
	}
	whole := seeDomains(paths, groups, o.Now, in)
	rep, unread := build(groups, o.Now, warn, fail, in, whole)
	// What could not be read comes first, in the order of the files, as
	// the scan and the packages' reads found it.
	var problems inputErrors
	for _, p := range tree.InOrder(unread) {
		problems.errorf("%s", p.Message)
	}
	in.errs = append(problems.errs, in.errs...)
	if !whole {
		for _, d := range rep.Domains {
			log.Note(fmt.Sprintf("trust domain %s is not seen whole (check sees a whole domain only when given the repository's top directory alone): its previous CAs are shown kept until they expire", kube.Quote(d.Name)))
		}
	}
	out, err := render(rep, o)
	if err != nil {
		return exit.Misuse(err)
	}
	if _, err := stdout.Write(out); err != nil {
		return exit.Misuse(fmt.Errorf("writing output: %w", err))
	}
	return exitStatus(rep, in, fail)
}

// inputErrors gathers the input errors check reports after its output.
type inputErrors struct {
	errs []error
}

func (in *inputErrors) errorf(format string, a ...any) {
	in.errs = append(in.errs, fmt.Errorf(format, a...))
}

// resolveThresholds returns the warn and fail windows: the policies'
// spec.expiry when they agree (a note on stderr when they do not and no
// flag decides), the defaults otherwise, each overridden by its flag.
func resolveThresholds(groups []group, warnFlag, failFlag *string, log exit.Printer) (warn, fail time.Duration, err error) {
	warn, fail = policy.DefaultWarnWithin, policy.DefaultFailWithin
	if w, f, ok, agree := thresholds(groups); ok && agree {
		warn, fail = w, f
	} else if ok && warnFlag == nil && failFlag == nil {
		log.Note(fmt.Sprintf("the policies set different spec.expiry thresholds; using %s and %s (set --warn-within and --fail-within)",
			policy.FormatDuration(warn), policy.FormatDuration(fail)))
	}
	for _, fl := range []struct {
		name  string
		value *string
		into  *time.Duration
	}{{"warn-within", warnFlag, &warn}, {"fail-within", failFlag, &fail}} {
		if fl.value == nil {
			continue
		}
		d, err := policy.ParseDuration(*fl.value)
		if err != nil {
			return 0, 0, fmt.Errorf("--%s %s: %v", fl.name, kube.Quote(*fl.value), err)
		}
		if d < 0 {
			return 0, 0, fmt.Errorf("--%s %s: want a non-negative duration such as 720h or 30d", fl.name, kube.Quote(*fl.value))
		}
		*fl.into = d
	}
	if fail > warn {
		return 0, 0, fmt.Errorf("--fail-within %s is longer than --warn-within %s", policy.FormatDuration(fail), policy.FormatDuration(warn))
	}
	return warn, fail, nil
}

// thresholds returns the spec.expiry of the policies that decode, ok when
// there is one, agree when they all say the same.
func thresholds(groups []group) (warn, fail time.Duration, ok, agree bool) {
	agree = true
	for _, g := range groups {
		for _, d := range g.Policies {
			if d.Err != nil {
				continue
			}
			p := d.Decoded
			w, f := p.Spec.Expiry.WarnWithin.Duration, p.Spec.Expiry.FailWithin.Duration
			if ok && (w != warn || f != fail) {
				agree = false
			}
			warn, fail, ok = w, f, true
		}
	}
	return warn, fail, ok, agree
}

// build makes the report of every package (buildPackage), the packages on
// every core (pass.Each: each parsed when a worker takes it, let go once
// its report is made), and merges them in package order. A policy that
// cannot be applied, and a package that cannot be read, is an input
// error; it returns the problems of the files the packages' reads found.
func build(groups []group, now time.Time, warn, fail time.Duration, in *inputErrors, whole bool) (report.Report, []resio.Problem) {
	type built struct {
		part     report.Report
		errs     inputErrors
		unread   []resio.Problem
		domainOf map[report.BundleKey]string
	}
	var unread []resio.Problem
	parts := make([]report.Report, len(groups))
	domainOf := map[report.BundleKey]string{}
	paths := map[*pass.Package]string{}
	for _, g := range groups {
		paths[g.Package] = g.path
	}
	pass.Each(packages(groups), 0, func(p *pass.Package, r *resio.Resources, err error) built {
		b := built{domainOf: map[report.BundleKey]string{}}
		if err != nil {
			b.errs.errorf("%v", err)
			return b
		}
		b.unread = r.Problems
		items := layout.WithoutPolicies(append(r.Items, r.FunctionConfigs...))
		b.part = buildPackage(group{Package: p, path: paths[p]}, items, now, warn, fail, &b.errs, b.domainOf)
		return b
	}, func(i int, b built) {
		parts[i] = b.part
		in.errs = append(in.errs, b.errs.errs...)
		unread = append(unread, b.unread...)
		for k, d := range b.domainOf {
			domainOf[k] = d
		}
	})
	rep := report.Merge(now, warn, fail, parts...)
	rep.Domains = report.Domains(rep, domainOf, whole)
	return rep, unread
}

// buildPackage makes the report of one package: its certificates (of
// items, its resources without the policies), and the leaves its policies
// say to re-issue.
func buildPackage(g group, items []*yaml.RNode, now time.Time, warn, fail time.Duration, in *inputErrors, domainOf map[report.BundleKey]string) report.Report {
	var all rotate.Explanation
	for _, e := range g.Explain(items, now) {
		if e.Err != nil {
			in.errorf("policy %s: %v", describe(e.Node), e.Err)
			continue
		}
		for b, d := range e.Domains {
			domainOf[report.BundleKey{Package: g.path, Bundle: b}] = d
		}
		all.Reissues = append(all.Reissues, e.Reissues...)
		all.Trust = append(all.Trust, e.Trust...)
		all.Waves = append(all.Waves, e.Waves...)
		all.Renewals = append(all.Renewals, e.Renewals...)
	}
	part := report.Build(inventory.ScanAll(items), dedupeReissues(all.Reissues), all.Trust, now, warn, fail)
	part.Waves, part.Renewals = all.Waves, all.Renewals
	part = part.InPackage(g.path)
	if len(g.Policies) > 0 {
		pkg := report.Package{Path: g.path}
		for _, p := range g.Policies {
			pkg.Policies = append(pkg.Policies, kube.RefOf(p.Node))
		}
		part.Packages = []report.Package{pkg}
	}
	return part
}

// seeDomains gives every package the repository's trust domains, seen
// whole, when check reads one directory and it is the repository's top,
// and says whether it did (each domain is then seen in part). Bundles of
// one domain that disagree on retain are an input error.
func seeDomains(paths []string, groups []group, now time.Time, in *inputErrors) bool {
	if len(paths) != 1 || paths[0] == "-" {
		return false
	}
	if st, err := os.Stat(paths[0]); err != nil || !st.IsDir() || !resio.IsRepositoryTop(paths[0]) {
		return false
	}
	if err := pass.Domains(packages(groups), now, nil); err != nil {
		in.errorf("%v", err)
		return false
	}
	return true
}

// render writes rep in o.Format.
func render(rep report.Report, o Options) ([]byte, error) {
	switch o.Format {
	case "json":
		return report.RenderJSON(rep)
	case "svg":
		return report.RenderSVG(rep), nil
	default:
		return report.RenderTable(rep, report.TableOptions{Color: o.Color, Wide: o.Format == "wide", NoHeaders: o.NoHeaders}), nil
	}
}

// exitStatus is check's exit policy: input it could not read is a usage
// error (exit.Usage), before anything inside the fail window or expired
// (exit.Failed).
func exitStatus(rep report.Report, in *inputErrors, fail time.Duration) error {
	switch {
	case len(in.errs) > 0 || len(rep.Problems) > 0:
		errs := in.errs
		if len(rep.Problems) > 0 {
			errs = append(errs, fmt.Errorf("%d value(s) hold certificate data that does not parse", len(rep.Problems)))
		}
		return exit.Misuse(errors.Join(errs...))
	case rep.Failing():
		c := rep.Counts()
		return exit.Fail(fmt.Errorf("%d expired, %d inside --fail-within %s", c.Expired, c.Fail, policy.FormatDuration(fail)))
	}
	return nil
}

// describe names a policy for messages: its name and file, what of them
// can be read.
func describe(n *yaml.RNode) string {
	r := kube.RefOf(n)
	s := kube.Safe(r.Name)
	if r.Path != "" {
		s += " (" + kube.Safe(r.Path) + ")"
	}
	return s
}

// dedupeReissues drops repeats when several policies report the same
// certificate for the same bundle.
func dedupeReissues(rs []why.Reissue) []why.Reissue {
	seen := map[string]bool{}
	var out []why.Reissue
	for _, r := range rs {
		k := r.Package + "\x00" + r.Bundle + "\x00" + r.Resource.String() + "\x00" + r.Key + "\x00" + r.SHA256 + "\x00" + r.IssuerSHA256 + "\x00" + r.Issuer
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}
