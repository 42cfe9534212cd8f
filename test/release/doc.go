// Package release tests what a release ships, with tools that stay out of
// rotate-certs' own dependencies (a module of its own, like test/crdschema):
// kubeconform validates every policy of the repository against the committed
// JSON Schema; goreleaser's snapshot is built offline and its archives,
// checksums, signature and SBOMs are checked, the SBOMs with the SPDX
// project's own validator. Run it from this directory:
//
//	go test ./...
package release
