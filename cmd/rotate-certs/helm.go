package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/spf13/cobra"
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
			return postRender(policyFile, stdin, stdout, logFor(cmd, stderr))
		},
	}
	cmd.Flags().StringVar(&policyFile, "policy", "", "RotationPolicy file (required)")
	return cmd
}

// postRender is the function as a Helm post-renderer: the documents Helm
// rendered in, the policy as the functionConfig, the documents out in the
// order they came, new resources (a created target, an alerts
// PrometheusRule) after them - all of it, or nothing when the function
// fails.
func postRender(policyFile string, stdin io.Reader, stdout io.Writer, log exit.Printer) error {
	policy, err := resio.ReadPolicyFile(policyFile)
	if err != nil {
		return exit.Fail(err)
	}
	input, err := io.ReadAll(resio.LimitReader(stdin, resio.MaxInputBytes))
	if err != nil {
		return exit.Fail(fmt.Errorf("reading stdin: %w", err))
	}
	docs, err := resio.ReadDocuments(input)
	if err != nil {
		return exit.Fail(err)
	}
	out, _, err := rotate.Processor{Now: time.Now, Stderr: log}.Run(policy, docs.Items, nil)
	if err != nil {
		return exit.Fail(err)
	}
	return exit.Fail(resio.WriteDocuments(stdout, out))
}
