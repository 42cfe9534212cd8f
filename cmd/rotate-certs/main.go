// Command rotate-certs renders CA trust bundles, restart annotations and
// Cluster API expiry fields for GitOps repositories. With no arguments it is
// a KRM function (ResourceList on stdin, ResourceList on stdout), which is
// how kustomize and kpt call it.
package main

import "os"

func main() {
	os.Exit(run(newRootCommand(os.Stdin, os.Stdout, os.Stderr), os.Stderr))
}
