package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/fninput"
	"github.com/rotate-certs/rotate-certs/fn/krmio"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// exitCode is an error that carries only an exit status: the message has
// already been printed.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func asExitCode(err error, target *exitCode) bool { return errors.As(err, target) }

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
			hintOnTerminal(stdin, stderr)
			return runFunction(stdin, stdout, stderr)
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newRenderCommand(stdout, stderr), newVersionCommand(stdout))
	root.AddCommand(newCheckCommand(stdin, stdout, stderr))
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

// runFunction is function mode: ResourceList in, ResourceList out. Inputs
// in kyaml's canonical layout (what kustomize and kpt send) take the fast
// path of package krmio; anything else goes through kyaml's own reader.
func runFunction(stdin io.Reader, stdout, stderr io.Writer) error {
	input, err := io.ReadAll(fninput.LimitReader(stdin, fninput.MaxInputBytes))
	if err != nil {
		return fmt.Errorf("reading the ResourceList: %w", err)
	}
	// Not a ResourceList at all: say what came and which command fits,
	// and write nothing on stdout.
	if hint := fninput.Explain(input); hint != "" {
		fmt.Fprintln(stderr, "rotate-certs: "+hint)
		return exitCode(exitUsage)
	}
	defer krmio.TuneMemory(len(input))()
	p := rotate.Processor{Now: time.Now, Stderr: stderr}
	handled, err := krmio.Run(input, stdout, rotate.Needs, p.RunAt)
	if !handled && len(input) > fninput.MaxKyamlInputBytes {
		fmt.Fprintln(stderr, fninput.ErrNotCanonicalTooLarge{Size: len(input), Reason: err})
		return exitCode(1)
	}
	if !handled {
		err = p.ExecuteKyaml(input, stdout)
	}
	if err != nil {
		msg := kube.ScrubError(err)
		if strings.Contains(msg.Error(), "no functionConfig") {
			// How it was called, not what it was given: say how to call it.
			fmt.Fprintln(stderr, "rotate-certs: "+fninput.NoFunctionConfig())
			return exitCode(exitUsage)
		}
		fmt.Fprintln(stderr, msg)
		if strings.Contains(msg.Error(), "functionConfig is v1 ConfigMap") {
			// kpt fn eval without --fn-config sends an empty ConfigMap.
			fmt.Fprintln(stderr, "rotate-certs: "+fninput.ConfigMapFunctionConfig())
			return exitCode(exitUsage)
		}
		return exitCode(exitFailed)
	}
	return nil
}

// hintOnTerminal says on stderr what function mode waits for when stdin is
// a terminal: someone typed rotate-certs without arguments, and would
// otherwise wait for a ResourceList that never comes.
func hintOnTerminal(stdin io.Reader, stderr io.Writer) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintln(stderr, "rotate-certs: function mode: reading a ResourceList from stdin (end with Ctrl-D); see rotate-certs --help for render, check and init")
	}
}
