package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/initpolicy"
	"github.com/rotate-certs/rotate-certs/fn/kube"
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

A tree of packages gets a policy per package, split as render and check split it:
the directory of a RotationPolicy, or where there is none yet of a kustomization
or Kptfile; files in no package are left out, with a note. Stdout then holds one
policy per package (each starting "# package DIR"), and --output,
--kustomization and --kptfile take a file name, written or edited in each
package's directory. Bundles of different packages whose sources hold the same CA
get one trust domain (spec.trustBundles[].domain), named by a policy of the input
or after the shared CA's subject common name (lowercased, other characters than
a-z, 0-9, '-' and '.' made '-'): render the tree from its top to see it whole.

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
// the policy (a policy per package of a tree of several) and, when asked,
// wires it into the kustomization or Kptfile.
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
	tree, err := initpolicy.ProposeTree(initpolicy.Input{Items: items, Roots: initpolicy.PackageRoots(items), Namespace: initpolicy.Namespaces(args)}, now)
	if err != nil {
		return exit.Fail(err)
	}
	for _, n := range tree.Notes {
		log.Print(n)
	}
	pkgs := tree.Packages
	if len(pkgs) > 1 {
		if err := eachPackage(setup); err != nil {
			return usageError(cmd, fmt.Errorf("%w: init found %d packages (%s)", err, len(pkgs), strings.Join(dirsOf(pkgs), ", ")))
		}
	}
	var files []wire.File
	var docs [][]byte
	for _, p := range pkgs {
		s, prefix := setupFor(setup, p, len(pkgs) > 1)
		for _, n := range p.Notes {
			log.Print(prefix + n)
		}
		if len(p.Bundles) == 0 {
			log.Print(prefix + "no Secret or ConfigMap holding a CA certificate found")
		}
		out, wiring, err := proposePolicy(p.Proposal, name, s)
		if err != nil {
			return exit.Fail(err)
		}
		docs = append(docs, documentOf(out, p, len(pkgs) > 1))
		files = append(append(files, wire.File{Path: s.Policy, Data: out, Changed: true}), wiring...)
	}
	if setup.Policy == "" || setup.Policy == "-" {
		_, err = stdout.Write(bytes.Join(docs, []byte("---\n")))
		return exit.Fail(err)
	}
	return writeInit(files, stdout)
}

// eachPackage says what in setup cannot apply to every package of a tree:
// --output, --kustomization and --kptfile are then file names, taken in each
// package's directory.
func eachPackage(s wire.Setup) error {
	for _, f := range []struct{ flag, value string }{{"--output", s.Policy}, {"--kustomization", s.Kustomization}, {"--kptfile", s.Kptfile}} {
		if f.value != "" && f.value != "-" && filepath.Base(f.value) != f.value {
			return fmt.Errorf("%s %s: with several packages it names the file in each package's directory (a file name, such as %s)", f.flag, f.value, map[string]string{
				"--output": "rotation-policy.yaml", "--kustomization": "kustomization.yaml", "--kptfile": "Kptfile"}[f.flag])
		}
	}
	return nil
}

// setupFor returns setup for package p (each of several: its files in p's
// directory) and the prefix of p's notes.
func setupFor(setup wire.Setup, p initpolicy.PackagePlan, several bool) (wire.Setup, string) {
	if !several {
		return setup, ""
	}
	in := func(name string) string {
		if name == "" || name == "-" {
			return name
		}
		return filepath.Join(filepath.FromSlash(p.Dir), name)
	}
	setup.Policy, setup.Kustomization, setup.Kptfile = in(setup.Policy), in(setup.Kustomization), in(setup.Kptfile)
	return setup, kube.SafePath(p.Dir) + ": "
}

// proposePolicy writes plan as a policy named name, with its function
// annotation and, to a file, the kustomization and Kptfile edits of s.
func proposePolicy(plan *initpolicy.Proposal, name string, s wire.Setup) (policy []byte, wiring []wire.File, err error) {
	if !s.Runner.Empty() {
		r := s.Runner
		if r.Exec, err = s.ExecFor(); err != nil {
			return nil, nil, err
		}
		plan.Function = r.FunctionAnnotation()
	}
	if policy, err = plan.YAML(name); err != nil {
		return nil, nil, err
	}
	if s.Policy == "" || s.Policy == "-" {
		return policy, nil, nil
	}
	wiring, err = s.Wiring()
	return policy, wiring, err
}

// documentOf is the policy of p as printed on stdout: with several
// packages, each one a document that starts by naming its package.
func documentOf(policy []byte, p initpolicy.PackagePlan, several bool) []byte {
	if !several {
		return policy
	}
	return append([]byte("# package "+kube.SafePath(p.Dir)+": save as its rotation-policy.yaml\n"), policy...)
}

// writeInit writes the policies and the files they are wired into, all or
// nothing, and says which.
func writeInit(files []wire.File, stdout io.Writer) error {
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

func dirsOf(pkgs []initpolicy.PackagePlan) []string {
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		out[i] = kube.SafePath(p.Dir)
	}
	return out
}
