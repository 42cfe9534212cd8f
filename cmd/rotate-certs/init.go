package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/initpolicy"
	"github.com/rotate-certs/rotate-certs/fn/wire"
	"github.com/spf13/cobra"
)

const initLong = `init scans manifests (files, directories by the rules render and check follow, "-"
for stdin; default ".") and writes a starter RotationPolicy to stdout, or to
--output FILE. Every Secret or ConfigMap that is a CA source becomes the source of
a trust bundle, a target name is proposed next to it, and the workloads that read
the source today are listed as comments. A CA source is a CA's own key pair, a
value that holds only CAs, or a leaf Secret's copy of its issuer (ca.crt) when
nothing better holds that CA; a leaf Secret whose ca.crt holds an older root
(one an existing trust bundle already carries, or an older CA of the same name
than another source holds) is not, nor is an existing target. A CA that has
expired (at --now, default the clock) is not proposed: a bundle of only expired
CAs would not render. What was skipped, and why, goes to stderr.

What is already wired is proposed as the target instead of a new object: a
trust-manager Bundle whose sources read a CA source (kind: Bundle, no sources in
the policy), or the object a mesh's workloads trust - Linkerd's
linkerd-identity-trust-roots (ca-bundle.crt), Istio's plug-in CA Secret cacerts
(root-cert.pem) - under its own name and key, with restart.mesh for that mesh and
the namespaces it injects listed as comments. Istio's istio-ca-root-cert
ConfigMaps are neither target nor source (istiod writes them from its CA's
roots): a note names them and asks for cacerts.

So that the next step runs with no hand edits: --exec PATH (the rotate-certs
binary) or --image REF (its container image) writes the policy's
config.kubernetes.io/function annotation; --kustomization FILE lists the policy
under the kustomization's transformers: and --kptfile FILE adds the Kptfile
pipeline mutator (both need --output; their comments and other entries are
kept). Paths are given from the working directory and written as the tools read
them: an exec path relative to the kustomization's directory (kustomize) and to
the Kptfile's (run kpt from the package directory). The policy and the edited
files are written all or nothing.`

func newInitCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var name, nowFlag string
	var setup wire.Setup
	cmd := &cobra.Command{
		Use:   "init [PATH...]",
		Short: "Write a starter RotationPolicy from the manifests found, wired to kustomize or kpt",
		Long:  initLong,
		Example: `  rotate-certs init ./clusters/prod > ./clusters/prod/rotation-policy.yaml
  kustomize build ./overlays/prod | rotate-certs init - > rotation-policy.yaml

  # write the policy and wire it into the kustomization: kustomize build runs it
  rotate-certs init clusters/prod -o clusters/prod/rotation-policy.yaml \
    --exec bin/rotate-certs --kustomization clusters/prod/kustomization.yaml
  kustomize build --enable-alpha-plugins --enable-exec clusters/prod

  # the same for a kpt package
  rotate-certs init clusters/prod -o clusters/prod/rotation-policy.yaml \
    --exec bin/rotate-certs --kptfile clusters/prod/Kptfile
  (cd clusters/prod && kpt fn render --allow-exec)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInit(cmd, name, nowFlag, setup, args, stdin, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", initpolicy.DefaultName, "metadata.name of the policy")
	f.StringVar(&nowFlag, "now", "", "judge expiry at this RFC 3339 time or date (2026-11-22) instead of the clock")
	f.StringVarP(&setup.Policy, "output", "o", "", "write the policy to this file (replaced only on success) instead of stdout")
	f.StringVar(&setup.Runner.Exec, "exec", "", "path of the rotate-certs binary: written as the policy's config.kubernetes.io/function exec path (and the Kptfile's)")
	f.StringVar(&setup.Runner.Image, "image", "", "container image of rotate-certs: written as the function's container image instead of --exec")
	f.StringVar(&setup.Kustomization, "kustomization", "", "kustomization file to list the policy in, under transformers: (needs --output)")
	f.StringVar(&setup.Kptfile, "kptfile", "", "Kptfile to add the pipeline mutator to (needs --output and --exec or --image)")
	return cmd
}

// runInit is init once its flags are parsed: it scans the input, writes
// the policy and, when asked, wires it into the kustomization or Kptfile.
func runInit(cmd *cobra.Command, name, nowFlag string, setup wire.Setup, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	now, err := parseNow(nowFlag, time.Now().UTC())
	if err != nil {
		return usageError(cmd, fmt.Errorf("--now: %w", err))
	}
	if err := setup.Check(); err != nil {
		return usageError(cmd, err)
	}
	log := logFor(cmd, stderr)
	items, warnings, err := initpolicy.Read(args, stdin)
	if err != nil {
		return exit.Fail(err)
	}
	for _, w := range warnings {
		log.Print(w)
	}
	plan, err := initpolicy.Scan(items, now)
	if err != nil {
		return exit.Fail(err)
	}
	for _, n := range plan.Notes {
		log.Print(n)
	}
	if len(plan.Bundles) == 0 {
		log.Print("no Secret or ConfigMap holding a CA certificate found")
	}
	if !setup.Runner.Empty() {
		r := setup.Runner
		if r.Exec, err = setup.ExecFor(); err != nil {
			return exit.Fail(err)
		}
		plan.Function = r.FunctionAnnotation()
	}
	out, err := plan.YAML(name)
	if err != nil {
		return exit.Fail(err)
	}
	if setup.Policy == "" || setup.Policy == "-" {
		_, err = stdout.Write(out)
		return exit.Fail(err)
	}
	files, err := setup.Wiring()
	if err != nil {
		return exit.Fail(err)
	}
	files = append([]wire.File{{Path: setup.Policy, Data: out, Changed: true}}, files...)
	if err := wire.Write(files); err != nil {
		return exit.Fail(err)
	}
	for _, f := range files {
		verb := "wrote"
		if !f.Changed {
			verb = "unchanged"
		}
		fmt.Fprintf(stdout, "%s %s\n", verb, f.Path)
	}
	return nil
}
