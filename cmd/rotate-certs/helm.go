package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/fninput"
	"github.com/rotate-certs/rotate-certs/fn/helmpost"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/manifests"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

func newHelmPostRendererCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var policyFile string
	cmd := &cobra.Command{
		Use:   "helm-post-renderer --policy FILE",
		Short: "Run as a Helm post-renderer: the chart's manifests in, rendered manifests out",
		Long: `helm-post-renderer reads the multi-document YAML that helm install, upgrade or
template pipes to a --post-renderer, runs the function on it with the policy from
--policy (the same rules as function mode), and writes the documents back, in
their order, with new resources (a created target) after them. The policy is not
written, nor is any local-config object the chart renders (kustomize and kpt never
apply those either). Warnings go to stderr; on any error nothing is written and
the exit status is 1, so helm stops.

Helm 3 runs a post-renderer as an executable with the arguments given by
--post-renderer-args (Helm 4 takes post-renderers as plugins instead). The
function's memory is what the chart renders: keep the trust bundle target in the
chart (for example from a values file that holds the bundle as last rendered),
or each install creates it anew, with no previous CA to carry.`,
		Example: `  helm template gateway ./chart --post-renderer rotate-certs \
    --post-renderer-args helm-post-renderer --post-renderer-args --policy=rotation-policy.yaml

  helm upgrade --install gateway ./chart --post-renderer ./bin/rotate-certs \
    --post-renderer-args helm-post-renderer --post-renderer-args --policy=rotation-policy.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if policyFile == "" {
				return usageError(cmd, errors.New("--policy FILE is required"))
			}
			policy, err := manifests.ReadPolicyFile(policyFile)
			if err != nil {
				return fmt.Errorf("helm-post-renderer: %w", err)
			}
			input, err := io.ReadAll(fninput.LimitReader(stdin, fninput.MaxInputBytes))
			if err != nil {
				return fmt.Errorf("helm-post-renderer: reading stdin: %w", err)
			}
			p := rotate.Processor{Now: time.Now, Stderr: stderr}
			var failed bool
			err = helmpost.Render(input, policy, func(rl *framework.ResourceList) error {
				if err := p.Process(rl); err != nil {
					failed = true
					return err
				}
				return nil
			}, stdout)
			if failed {
				fmt.Fprintln(stderr, kube.ScrubError(err))
				return exitCode(exitFailed)
			}
			if err != nil {
				return fmt.Errorf("helm-post-renderer: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&policyFile, "policy", "", "RotationPolicy file (required)")
	return cmd
}
