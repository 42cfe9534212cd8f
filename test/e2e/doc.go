// Package e2e drives the rotate-certs binary, built once per run, the way
// its users do: through the real kustomize, kpt, Helm, git and shell over
// the repository's examples and whole repository trees, with the CI, Argo CD
// and in-cluster flows of the examples run as written. A test that needs a
// program that is not installed skips, naming how to get it. The shared
// setup is internal/e2eharness.
package e2e
