package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/check"
	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/spf13/cobra"
)

// checkOptions are check's flags.
type checkOptions struct {
	output     string
	warnWithin string
	failWithin string
	now        string
	policy     string
	noHeaders  bool
}

const checkLong = `check finds every certificate in the manifests under PATH (files, directories
walked recursively for *.yaml, *.yml and *.json, or - for stdin; multi-document
YAML, Lists, typed lists such as SecretList, and ResourceLists; a file reached
twice is read once) and reports its expiry: PEM in any Secret or ConfigMap value
(data, stringData, binaryData; local-config snapshots included), the certificates
inside kubeconfig values (certificate-authority-data, client-certificate-data),
the caBundle fields of webhook configurations, APIServices and CRD conversion
webhooks, ClusterTrustBundles' spec.trustBundle, trust-manager Bundles' inLine
sources, Cluster API Machines'
certificate expiry (the machine.cluster.x-k8s.io/certificates-expiry
annotation, else that of the Machine's bootstrap config, such as its
KubeadmConfig, else status.certificatesExpiryDate) and EKS Anywhere Clusters'
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
status; no value is ever cut; colour only on a terminal, NO_COLOR disables it),
wide (more columns: issuer, fingerprint, time of expiry, package),
json (stable schema rotate-certs.dev/check/v1, see docs/reference/check.md), svg (a timeline).
--no-headers prints the table rows only.

Exit status:
  0  nothing is inside --fail-within or expired
  1  a certificate or reported expiry is inside --fail-within, or expired
  2  usage or input error: a bad flag, an unreadable path, YAML that does not
     parse or defines a key twice, an invalid policy, or certificate data that
     does not parse (reported in the output and counted); 2 wins over 1`

func newCheckCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Report every certificate's expiry; fail CI when one is inside --fail-within",
		Long:  checkLong,
		Example: `  rotate-certs check ./clusters/prod
  kustomize build ./overlays/prod | rotate-certs check - --fail-within 14d
  kubectl get secrets -A -o yaml | rotate-certs check - -o json
  rotate-certs check ./clusters/prod -o svg > timeline.svg`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd, o, args, stdin, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "table", "output format: table, wide, json or svg")
	f.BoolVar(&o.noHeaders, "no-headers", false, "table and wide: print the rows only (no column names, titles or summary)")
	f.StringVar(&o.warnWithin, "warn-within", "", "warn about expiry within this duration, e.g. 720h or 30d (default 30d, or the policy's spec.expiry.warnWithin)")
	f.StringVar(&o.failWithin, "fail-within", "", "fail (exit 1) on expiry within this duration, e.g. 168h or 7d (default 7d, or the policy's spec.expiry.failWithin)")
	f.StringVar(&o.now, "now", "", "evaluate at this RFC 3339 time or date (2026-11-22) instead of the clock")
	f.StringVar(&o.policy, "policy", "", "RotationPolicy file for the re-issue report (default: any RotationPolicy among the inputs)")
	return cmd
}

// runCheck turns the flags into check.Options and runs the check: it
// returns what ends the command (check.Run).
func runCheck(cmd *cobra.Command, o *checkOptions, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if !slices.Contains(check.Formats, o.output) {
		return exit.Misuse(fmt.Errorf("-o %s: want table, wide, json or svg", kube.Quote(o.output)))
	}
	now, err := parseNow(o.now, time.Now().UTC())
	if err != nil {
		return exit.Misuse(fmt.Errorf("--now: %w", err))
	}
	opts := check.Options{
		Paths: args, Stdin: stdin, Now: now, PolicyFile: o.policy,
		Format: o.output, Color: colourTerminal(stdout), NoHeaders: o.noHeaders,
	}
	if cmd.Flags().Changed("warn-within") {
		opts.WarnWithin = &o.warnWithin
	}
	if cmd.Flags().Changed("fail-within") {
		opts.FailWithin = &o.failWithin
	}
	return check.Run(opts, stdout, logFor(cmd, stderr))
}

// parseNow parses the --now flag s, an RFC 3339 time or a date; "" is
// unset, the time def.
func parseNow(s string, def time.Time) (time.Time, error) {
	if s == "" {
		return def, nil
	}
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
