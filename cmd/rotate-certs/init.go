package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/initpolicy"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/spf13/cobra"
)

func newInitCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var name, nowFlag string
	cmd := &cobra.Command{
		Use:   "init [PATH...]",
		Short: "Write a starter RotationPolicy from the manifests found",
		Long: `init scans manifests (files, directories recursively, "-" for stdin; default ".")
and writes a starter RotationPolicy to stdout. Every Secret or ConfigMap that holds a
CA certificate becomes the source of a trust bundle, a target name is proposed next
to it, and the workloads that read the source today are listed as comments. A CA
that has expired (at --now, default the clock) is not proposed: a bundle of only
expired CAs would not render. Notes about what was skipped go to stderr. Review
the policy, then render with it.`,
		Example: `  rotate-certs init ./clusters/prod > ./clusters/prod/rotation-policy.yaml
  kustomize build ./overlays/prod | rotate-certs init - > rotation-policy.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			now := time.Now().UTC()
			if nowFlag != "" {
				t, err := parseNow(nowFlag)
				if err != nil {
					return usageError(cmd, fmt.Errorf("--now: %w", err))
				}
				now = t
			}
			items, warnings, err := initpolicy.Read(args, stdin)
			if err != nil {
				return fmt.Errorf("init: %w", err)
			}
			for _, w := range warnings {
				fmt.Fprintln(stderr, "rotate-certs init: "+kube.ScrubMessage(w))
			}
			plan, err := initpolicy.Scan(items, now)
			if err != nil {
				return fmt.Errorf("init: %w", err)
			}
			for _, n := range plan.Notes {
				fmt.Fprintln(stderr, "rotate-certs init: "+kube.ScrubMessage(n))
			}
			if len(plan.Bundles) == 0 {
				fmt.Fprintln(stderr, "rotate-certs init: no Secret or ConfigMap holding a CA certificate found")
			}
			out, err := plan.YAML(name)
			if err != nil {
				return fmt.Errorf("init: %w", err)
			}
			_, err = stdout.Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&name, "name", initpolicy.DefaultName, "metadata.name of the policy")
	cmd.Flags().StringVar(&nowFlag, "now", "", "judge expiry at this RFC 3339 time or date (2026-11-22) instead of the clock")
	return cmd
}
