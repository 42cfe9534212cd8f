// Command rotate-certs renders CA trust bundles, restart annotations and
// Cluster API expiry fields for GitOps repositories. With no arguments it is
// a KRM function (ResourceList on stdin, ResourceList on stdout), which is
// how kustomize and kpt call it.
package main

import (
	"fmt"
	"os"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

func main() {
	cmd := newRootCommand(os.Stdin, os.Stdout, os.Stderr)
	if err := cmd.Execute(); err != nil {
		var code exitCode
		if ok := asExitCode(err, &code); ok {
			os.Exit(int(code))
		}
		fmt.Fprintln(os.Stderr, kube.ScrubError(err))
		if isUsageError(err) {
			os.Exit(exitUsage)
		}
		os.Exit(exitFailed)
	}
}
