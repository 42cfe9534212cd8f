package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func newRenderCommand(stderr io.Writer) *cobra.Command {
	var policyFile string
	cmd := &cobra.Command{
		Use:   "render DIR --policy FILE",
		Short: "Render a directory of manifests in place (kpt fn render without kpt)",
		Long: `render reads every YAML file under DIR, runs the function with the policy
from --policy, and writes the resources back to their files: file layout, comments,
field order and unrelated files are kept; new targets get files of their own.
On any error nothing is written and the exit code is 1.`,
		Example: `  # render a directory with the policy kept next to the manifests
  rotate-certs render ./clusters/prod --policy ./clusters/prod/rotation-policy.yaml

  # review what changed like any other change, then commit it
  git diff ./clusters/prod

  # in CI, render and commit only when something changed: examples/ci
  ./render-and-commit.sh ./clusters/prod ./clusters/prod/rotation-policy.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if policyFile == "" {
				return usageError(cmd, errors.New("--policy FILE is required"))
			}
			return render(args[0], policyFile, stderr)
		},
	}
	cmd.Flags().StringVar(&policyFile, "policy", "", "RotationPolicy file (required)")
	return cmd
}

func render(dir, policyFile string, stderr io.Writer) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("render: %s is not a directory", dir)
	}
	fnConfig, err := yaml.ReadFile(policyFile)
	if err != nil {
		return fmt.Errorf("render: reading policy %s: %w", policyFile, err)
	}
	pkg := &kio.LocalPackageReadWriter{PackagePath: dir, PreserveSeqIndent: true}
	items, err := pkg.Read()
	if err != nil {
		return fmt.Errorf("render: reading %s: %w", dir, err)
	}
	rl := &framework.ResourceList{Items: items, FunctionConfig: fnConfig}
	p := rotate.Processor{Now: time.Now, Stderr: stderr}
	if err := p.Process(rl); err != nil {
		fmt.Fprintln(stderr, err)
		return exitCode(1)
	}
	if err := pkg.Write(rl.Items); err != nil {
		return fmt.Errorf("render: writing %s: %w", dir, err)
	}
	return nil
}
