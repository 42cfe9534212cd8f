package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/render"
	"github.com/spf13/cobra"
)

func newRenderCommand(stdout, stderr io.Writer) *cobra.Command {
	var policyFile, nowFlag string
	var dryRun, kustomization bool
	cmd := &cobra.Command{
		Use:   "render DIR [--policy FILE]",
		Short: "Render a directory of manifests in place (kpt fn render without kpt)",
		Long: `render reads every YAML file under DIR (except hidden files and directories
and what a .krmignore file lists, in DIR or any directory below it), runs the
function, and writes back only the files whose resources changed: file layout,
comments and field order are kept, and a file the function did not change is
not touched; in a file it rewrites, the documents whose resources did not
change keep their text, and so do the fields the function did not touch in
those that changed. New targets get files of their own, beside the policy.

Without --policy, every RotationPolicy under DIR is a package: it applies to
the directory of its file and everything below it, and a deeper policy's
directory is a package of its own, left out of the outer one - a repository
of many clusters (clusters/prod, clusters/staging, each with its policy and
objects of the same names) renders in one call. Files under no policy are left
as they are. A directory holds at most one policy. With --policy FILE (exactly
one RotationPolicy), DIR is rendered with it, except a deeper directory that
holds a policy of its own: that is still a package, rendered with its policy.
Any directory name is a package name: non-ASCII, spaces, CamelCase.

A new target is created in a file of its own; when that file's directory has a
kustomization (kustomization.yaml, kustomization.yml or Kustomization) that does
not list it under resources:, kustomize build would leave the new target out:
render warns, naming the kustomization and the file, and --kustomization lists
it there instead (comments, order and line ends kept; a kustomization that
defines a key twice is refused, and nothing is written). --dry-run shows that
edit in its diff.

On success it prints one line per file written ("wrote PATH") or created
("created PATH"); --dry-run writes nothing and prints the unified diff it
would apply instead (git apply takes it). A template that is not YAML (a Helm
chart's, {{ ... }}) is skipped with a note.

On any error nothing is written, in any package, and the exit code is 1 (2 for
a mistake on the command line). Files are replaced whole (written beside,
flushed, renamed), never cut short, and only when every one of them can be: a
read-only file, a symbolic link that leads out of DIR or a failed write changes
nothing. DIR/.rotate-certs.lock refuses a second render of the same DIR while
one runs; a killed render leaves no lock (the kernel drops it), and the next
render removes what it left.`,
		Example: `  # every package of a repository of many clusters, each with its own policy
  rotate-certs render .

  # what it would change, as a diff, without writing anything
  rotate-certs render ./clusters --dry-run

  # one directory with a policy kept elsewhere
  rotate-certs render ./clusters/prod --policy ./policies/prod.yaml

  # in CI, render and commit only when something changed: examples/ci
  ./render-and-commit.sh ./clusters/prod ./clusters/prod/rotation-policy.yaml

  # what a render three days from now would do (restart waves that come due)
  rotate-certs render . --dry-run --now 2026-11-25`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			at, err := parseNow(nowFlag, time.Time{})
			if err != nil {
				return usageError(cmd, fmt.Errorf("--now: %w", err))
			}
			o := render.Options{PolicyFile: policyFile, DryRun: dryRun, Kustomization: kustomization, Now: time.Now, At: at, Stdout: stdout, Stderr: logFor(cmd, stderr)}
			return render.Render(args[0], o)
		},
	}
	cmd.Flags().StringVar(&policyFile, "policy", "", "RotationPolicy file: render DIR as one package with it (default: every policy under DIR, each for its own package)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "write nothing; print the unified diff of what would change")
	cmd.Flags().BoolVar(&kustomization, "kustomization", false, "list each file the render creates under resources: of its directory's kustomization (without it, a kustomization that does not list one is warned about)")
	cmd.Flags().StringVar(&nowFlag, "now", "", "render at this RFC 3339 time or date (2026-11-22) instead of the clock; wins over the policies' spec.now")
	return cmd
}
