package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "rotate-certs",
		Short: "Zero-downtime CA rotation for GitOps: trust bundles, restarts, Cluster API expiry",
		Long: `rotate-certs renders what a CA rotation needs as plain manifests: trust bundles
that hold the new and the previous CA during the overlap, restart annotations for
workloads that cannot reload their CA, and Cluster API certificate-expiry fields.

With no arguments it is a KRM function: it reads a ResourceList whose
functionConfig is a RotationPolicy on stdin and writes the ResourceList on stdout.
That is how kustomize (transformers:, --enable-alpha-plugins --enable-exec) and
kpt (fn eval / fn render) call it.`,
		Example: `  # as a KRM function (what kustomize and kpt run)
  rotate-certs < resource-list.yaml

  # render a directory in place, like kpt fn render without kpt
  rotate-certs render ./manifests --policy policy.yaml`,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := logFor(cmd, stderr)
			hintOnTerminal(stdin, log)
			return runFunction(stdin, stdout, log)
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newRenderCommand(stdout, stderr), newVersionCommand(stdout))
	root.AddCommand(newCheckCommand(stdin, stdout, stderr))
	root.AddCommand(newDiffCommand(stdout, stderr))
	root.AddCommand(newInitCommand(stdin, stdout, stderr))
	root.AddCommand(newSnapshotCommand(stdin, stdout, stderr))
	root.AddCommand(newHelmPostRendererCommand(stdin, stdout, stderr))
	root.Version = versionString()
	root.SetVersionTemplate("{{.Version}}\n")
	// --version without cobra's -v shorthand: kubectl users read -v as
	// verbosity.
	root.Flags().Bool("version", false, "print the version and commit")
	withUsageErrors(root)
	return root
}

// runFunction is function mode: ResourceList in, ResourceList out
// (resio.RunList). A call with the wrong input is a usage error (exit 2)
// that says which command fits: not a ResourceList (nothing is written on
// stdout then), or no RotationPolicy as its functionConfig.
func runFunction(stdin io.Reader, stdout io.Writer, log exit.Printer) error {
	input, err := io.ReadAll(resio.LimitReader(stdin, resio.MaxInputBytes))
	if err != nil {
		return exit.Fail(fmt.Errorf("reading the ResourceList: %w", err))
	}
	if hint := resio.InputHint(input); hint != "" {
		return exit.Misuse(errors.New(hint))
	}
	defer resio.TuneMemory(len(input))()
	p := rotate.Processor{Now: time.Now, Stderr: log}
	err = resio.RunList(input, stdout, rotate.Needs, p.Run)
	switch {
	case errors.Is(err, policy.ErrNoFunctionConfig):
		// How it was called, not what it was given: say how to call it.
		return exit.Misuse(errors.New(resio.NoFunctionConfig()))
	case errors.Is(err, policy.ErrConfigMapFunctionConfig):
		// kpt fn eval without --fn-config sends an empty ConfigMap.
		return exit.Misuse(errors.Join(err, errors.New(resio.ConfigMapFunctionConfig())))
	}
	return exit.Fail(err)
}

// hintOnTerminal says on stderr what function mode waits for when stdin is
// a terminal: someone typed rotate-certs without arguments, and would
// otherwise wait for a ResourceList that never comes.
func hintOnTerminal(stdin io.Reader, log exit.Printer) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		log.Print("function mode: reading a ResourceList from stdin (end with Ctrl-D); see rotate-certs --help for render, check and init")
	}
}
