package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/manifests"
	"github.com/rotate-certs/rotate-certs/fn/packages"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/report"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Exit statuses of check: those of every command (usage.go), with 2 also
// for input check could not read - a gate must not pass on what it did
// not see.
const (
	checkOK      = exitOK
	checkFailing = exitFailed
	checkUsage   = exitUsage
)

type checkOptions struct {
	output     string
	warnWithin string
	failWithin string
	now        string
	policy     string
	noHeaders  bool
}

func newCheckCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Report every certificate's expiry; fail CI when one is inside --fail-within",
		Long: `check finds every certificate in the manifests under PATH (files, directories
walked recursively for *.yaml, *.yml and *.json, or - for stdin; multi-document
YAML, Lists, typed lists such as SecretList, and ResourceLists; a file reached
twice is read once) and reports its expiry: PEM in any Secret or ConfigMap value
(data, stringData, binaryData; local-config snapshots included), the certificates
inside kubeconfig values (certificate-authority-data, client-certificate-data),
the caBundle fields of webhook configurations, APIServices and CRD conversion
webhooks, ClusterTrustBundles' spec.trustBundle, trust-manager Bundles' inLine
sources, Cluster API Machines'
certificate expiry (the machine.cluster.x-k8s.io/certificates-expiry
annotation, else status.certificatesExpiryDate) and EKS Anywhere Clusters'
status.clusterCertificateInfo (days left as reported). With no PATH it reads
the current directory. Private keys are never read or printed.

A value is certificate data when a line starts with -----BEGIN CERTIFICATE-----
and is followed by an -----END CERTIFICATE----- line (or directly by base64, a
block cut short). Such data that does not parse is unreadable: reported, with
the certificates of the value that do parse. Other PEM (keys) and text that
only mentions the header are ignored. A file in which a mapping defines a key
twice (two manifests without --- between them) is an input error and is not
read: which value was meant is unknown.

Files are read by the rules render follows: hidden files and directories and
what a .krmignore lists (in the directory walked or any below it) are skipped; a
template that is not YAML (a Helm chart's, {{ ... }}) is skipped with a note; a
*.yaml that is not a regular file (a FIFO) is an input error, never waited on.

A RotationPolicy applies to the directory of its file and everything below it,
and a deeper policy's directory is a package of its own, as for render: a
repository of many clusters checks in one call, each package with its own
policy, and every row names its package (the PACKAGE column when the rows come
from more than one; "package" in JSON). Objects under no policy are reported
with package "" ("(none)"). Resources on stdin form one package with the
policies on stdin. With --policy FILE, all the input is one package checked
with that policy.

With a policy, check also lists the leaves to re-issue: leaves signed only by a
previous CA of a trust bundle, with the date that CA leaves the bundle. The
policies' spec.expiry thresholds are used unless the flags are set (when the
policies disagree, the defaults, with a note); spec.now is ignored (check asks
about --now or the wall clock).

Status: expired; FAIL within --fail-within; warn within --warn-within; ok.

Output (-o): table (default: resource, key, subject, expiry date, days left and
status, cut to fit 120 columns; colour only on a terminal, NO_COLOR disables
it), wide (every column, whole: issuer, fingerprint, time of expiry, package),
json (stable schema rotate-certs.dev/check/v1, see README), svg (a timeline).
--no-headers prints the table rows only.

Exit status:
  0  nothing is inside --fail-within or expired
  1  a certificate or reported expiry is inside --fail-within, or expired
  2  usage or input error: a bad flag, an unreadable path, YAML that does not
     parse or defines a key twice, an invalid policy, or certificate data that
     does not parse (reported in the output and counted); 2 wins over 1`,
		Example: `  rotate-certs check ./clusters/prod
  kustomize build ./overlays/prod | rotate-certs check - --fail-within 14d
  kubectl get secrets -A -o yaml | rotate-certs check - -o json
  rotate-certs check ./clusters/prod -o svg > timeline.svg`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			code := runCheck(cmd, o, args, stdin, stdout, stderr)
			if code != checkOK {
				return exitCode(code)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "table", "output format: table, wide, json or svg")
	f.BoolVar(&o.noHeaders, "no-headers", false, "table and wide: print the rows only (no column names, titles or summary)")
	f.StringVar(&o.warnWithin, "warn-within", "", "warn about expiry within this duration, e.g. 720h or 30d (default 30d, or the policy's spec.expiry.warnWithin)")
	f.StringVar(&o.failWithin, "fail-within", "", "fail (exit 1) on expiry within this duration, e.g. 168h or 7d (default 7d, or the policy's spec.expiry.failWithin)")
	f.StringVar(&o.now, "now", "", "evaluate at this RFC 3339 time or date (2026-11-22) instead of the clock")
	f.StringVar(&o.policy, "policy", "", "RotationPolicy file for the re-issue report (default: any RotationPolicy among the inputs)")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		fmt.Fprintln(stderr, usageError(c, err))
		return exitCode(checkUsage)
	})
	return cmd
}

// runCheck is check without cobra: it returns the exit status.
func runCheck(cmd *cobra.Command, o *checkOptions, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "check: "+format+"\n", a...)
		return checkUsage
	}
	switch o.output {
	case "table", "wide", "json", "svg":
	default:
		return usage("-o %s: want table, wide, json or svg", kube.Quote(o.output))
	}
	now := time.Now().UTC()
	if o.now != "" {
		t, err := parseNow(o.now)
		if err != nil {
			return usage("--now: %v", err)
		}
		now = t
	}
	if len(args) == 0 {
		args = []string{"."}
	}

	in := &checkInput{}
	set := manifests.Read(args, stdin)
	for _, p := range set.Problems {
		in.errorf("%s", p.Message)
	}
	for _, n := range set.Notes {
		fmt.Fprintf(stderr, "check: note: %s\n", n)
	}
	var forced *yaml.RNode
	if o.policy != "" {
		node, err := readPolicyFile(o.policy)
		if err != nil {
			in.errorf("--policy: %v", err)
		} else {
			forced = node
		}
	}
	groups := checkGroups(set, forced)

	warn, fail := policy.DefaultWarnWithin, policy.DefaultFailWithin
	if w, f, ok, agree := thresholds(groups); ok && agree {
		warn, fail = w, f
	} else if ok && !cmd.Flags().Changed("warn-within") && !cmd.Flags().Changed("fail-within") {
		fmt.Fprintf(stderr, "check: note: the policies set different spec.expiry thresholds; using %s and %s (set --warn-within and --fail-within)\n",
			report.FormatDuration(warn), report.FormatDuration(fail))
	}
	for _, fl := range []struct {
		name, value string
		into        *time.Duration
	}{{"warn-within", o.warnWithin, &warn}, {"fail-within", o.failWithin, &fail}} {
		if !cmd.Flags().Changed(fl.name) {
			continue
		}
		d, err := policy.ParseDuration(fl.value)
		if err != nil {
			return usage("--%s %s: %v", fl.name, kube.Quote(fl.value), err)
		}
		if d < 0 {
			return usage("--%s %s: want a non-negative duration such as 720h or 30d", fl.name, kube.Quote(fl.value))
		}
		*fl.into = d
	}
	if fail > warn {
		return usage("--fail-within %s is longer than --warn-within %s", report.FormatDuration(fail), report.FormatDuration(warn))
	}

	var parts []report.Report
	for _, g := range groups {
		var reissues []report.Reissue
		for _, p := range g.policies {
			rs, err := rotate.Reissues(g.items, p, now)
			if err != nil {
				in.errorf("policy %s: %v", describe(p), err)
				continue
			}
			reissues = append(reissues, rs...)
		}
		part := report.Build(report.Scan(g.items), dedupeReissues(reissues), now, warn, fail).InPackage(g.path)
		if len(g.policies) > 0 {
			pkg := report.Package{Path: g.path}
			for _, p := range g.policies {
				pkg.Policies = append(pkg.Policies, kube.RefOf(p))
			}
			part.Packages = []report.Package{pkg}
		}
		parts = append(parts, part)
	}
	rep := report.Merge(now, warn, fail, parts...)

	var out []byte
	switch o.output {
	case "json":
		b, err := report.RenderJSON(rep)
		if err != nil {
			fmt.Fprintf(stderr, "check: %v\n", err)
			return checkUsage
		}
		out = b
	case "svg":
		out = report.RenderSVG(rep)
	default:
		out = report.RenderTable(rep, report.TableOptions{Color: colourTerminal(stdout), Wide: o.output == "wide", NoHeaders: o.noHeaders})
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "check: writing output: %v\n", err)
		return checkUsage
	}
	for _, e := range in.errs {
		fmt.Fprintf(stderr, "check: %s\n", kube.ScrubMessage(e))
	}
	switch {
	case len(in.errs) > 0 || len(rep.Problems) > 0:
		if len(rep.Problems) > 0 {
			fmt.Fprintf(stderr, "check: %d value(s) hold certificate data that does not parse\n", len(rep.Problems))
		}
		return checkUsage
	case rep.Failing():
		c := rep.Counts()
		fmt.Fprintf(stderr, "check: %d expired, %d inside --fail-within %s\n", c.Expired, c.Fail, report.FormatDuration(fail))
		return checkFailing
	}
	return checkOK
}

// checkInput gathers the input errors check reports.
type checkInput struct {
	errs []string
}

func (in *checkInput) errorf(format string, a ...any) {
	in.errs = append(in.errs, fmt.Sprintf(format, a...))
}

// checkGroup is one package as check sees it: its resources (without the
// policies) and its policies.
type checkGroup struct {
	path     string
	items    []*yaml.RNode
	policies []*yaml.RNode
}

// checkGroups splits what check read into packages (package packages):
// each directory holding a RotationPolicy, by the resources' files; the
// resources from stdin, with the policies on stdin (functionConfigs of a
// ResourceList included); and the resources under no policy. forced (the
// --policy file) makes all of it one package.
func checkGroups(set *manifests.Set, forced *yaml.RNode) []checkGroup {
	all := append(append([]*yaml.RNode(nil), set.Items...), set.FunctionConfigs...)
	if forced != nil {
		g := checkGroup{policies: []*yaml.RNode{forced}}
		for _, n := range all {
			if !packages.IsPolicy(n) {
				g.items = append(g.items, n)
			}
		}
		return []checkGroup{g}
	}
	pkgs, rest := packages.Split(all)
	var groups []checkGroup
	for _, p := range pkgs {
		g := checkGroup{path: p.Dir, policies: p.Policies}
		for _, n := range p.Items {
			if !packages.IsPolicy(n) {
				g.items = append(g.items, n)
			}
		}
		groups = append(groups, g)
	}
	stdinGroup := checkGroup{path: "-"}
	var none checkGroup
	for _, n := range rest {
		file := packages.FileOf(n)
		switch {
		case file == "" && packages.IsPolicy(n):
			stdinGroup.policies = append(stdinGroup.policies, n)
		case file == "":
			stdinGroup.items = append(stdinGroup.items, n)
		default:
			none.items = append(none.items, n)
		}
	}
	if len(stdinGroup.policies) > 0 {
		groups = append(groups, stdinGroup)
	} else {
		none.items = append(none.items, stdinGroup.items...)
	}
	if len(none.items) > 0 || len(groups) == 0 {
		groups = append(groups, none)
	}
	return groups
}

// thresholds returns the spec.expiry of the policies that decode, ok when
// there is one, agree when they all say the same.
func thresholds(groups []checkGroup) (warn, fail time.Duration, ok, agree bool) {
	agree = true
	for _, g := range groups {
		for _, n := range g.policies {
			p, err := policy.Decode(n)
			if err != nil {
				continue
			}
			w, f := p.Spec.Expiry.WarnWithin.Duration, p.Spec.Expiry.FailWithin.Duration
			if ok && (w != warn || f != fail) {
				agree = false
			}
			warn, fail, ok = w, f, true
		}
	}
	return warn, fail, ok, agree
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

// dedupeReissues drops repeats when several policies report the same leaf
// for the same bundle.
func dedupeReissues(rs []report.Reissue) []report.Reissue {
	seen := map[string]bool{}
	var out []report.Reissue
	for _, r := range rs {
		k := r.Package + "\x00" + r.Bundle + "\x00" + r.Resource.String() + "\x00" + r.Key + "\x00" + r.SHA256 + "\x00" + r.IssuerSHA256
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

func parseNow(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%s is not an RFC 3339 time (2026-11-22T00:00:00Z) or a date (2026-11-22)", kube.Quote(s))
}

// colourTerminal reports whether w is a terminal that wants colour.
func colourTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
