package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/manifests"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/report"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Exit statuses of check.
const (
	checkOK      = 0
	checkFailing = 1
	checkUsage   = 2
)

type checkOptions struct {
	output     string
	warnWithin string
	failWithin string
	now        string
	policy     string
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

When a RotationPolicy is among the inputs (or given with --policy), check also
lists the leaves to re-issue: leaves signed only by a previous CA of a trust
bundle, with the date that CA leaves the bundle. A single policy's
spec.expiry thresholds are used unless the flags are set; its spec.now is
ignored (check asks about --now or the wall clock).

Status: expired; FAIL within --fail-within; warn within --warn-within; ok.

Output (-o): table (default; colour only on a terminal, NO_COLOR disables it),
json (stable schema rotate-certs.dev/check/v1, see README), svg (a timeline).

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
	f.StringVarP(&o.output, "output", "o", "table", "output format: table, json or svg")
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
	if o.output != "table" && o.output != "json" && o.output != "svg" {
		return usage("-o %s: want table, json or svg", kube.Quote(o.output))
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
	for _, fc := range set.FunctionConfigs {
		if isPolicy(fc) {
			in.policies = append(in.policies, fc)
		}
	}
	for _, n := range set.Items {
		if isPolicy(n) {
			in.policies = append(in.policies, n)
			continue
		}
		in.items = append(in.items, n)
	}
	if o.policy != "" {
		node, err := readPolicyFile(o.policy)
		if err != nil {
			in.errorf("--policy: %v", err)
		} else {
			in.policies = []*yaml.RNode{node}
		}
	}

	warn, fail := policy.DefaultWarnWithin, policy.DefaultFailWithin
	if len(in.policies) == 1 {
		if p, err := policy.Decode(in.policies[0]); err == nil {
			warn, fail = p.Spec.Expiry.WarnWithin.Duration, p.Spec.Expiry.FailWithin.Duration
		}
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

	var reissues []report.Reissue
	for _, p := range in.policies {
		rs, err := rotate.Reissues(in.items, p, now)
		if err != nil {
			in.errorf("policy %s: %v", describe(p), err)
			continue
		}
		reissues = append(reissues, rs...)
	}
	rep := report.Build(report.Scan(in.items), dedupeReissues(reissues), now, warn, fail)

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
		out = report.RenderTable(rep, report.TableOptions{Color: colourTerminal(stdout)})
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

// checkInput is what check read: resources, policies, and problems.
type checkInput struct {
	items    []*yaml.RNode
	policies []*yaml.RNode
	errs     []string
}

func (in *checkInput) errorf(format string, a ...any) {
	in.errs = append(in.errs, fmt.Sprintf(format, a...))
}

func isPolicy(n *yaml.RNode) bool {
	r := kube.RefOf(n)
	return r.Kind == policy.Kind && r.APIVersion == policy.APIVersion
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
		k := r.Bundle + "\x00" + r.Resource.String() + "\x00" + r.Key + "\x00" + r.SHA256 + "\x00" + r.IssuerSHA256
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
