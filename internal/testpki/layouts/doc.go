// Package layouts writes the trees and manifests that the tests of several
// packages share, each in the layout an upstream project writes or
// documents, with internal/testpki's certificates in it: Istio's plug-in
// CA fed to a kustomize secretGenerator (istio.go), and trust embedded in
// values no trust bundle writes - `linkerd inject`'s env values, Linkerd's
// chart values in a Flux HelmRelease, an Argo CD cluster Secret's config,
// a kubeconfig in Cluster API's Secret (embedded.go). The layouts are
// restated from the upstream sources named beside each; no upstream text
// is copied.
//
// It is test support only and never linked into the rotate-certs binary.
package layouts

import (
	"strings"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// pemOf is the certificates' PEM, concatenated.
func pemOf(certs ...testpki.Cert) string {
	var b strings.Builder
	for _, c := range certs {
		b.Write(c.PEM())
	}
	return b.String()
}

// indent puts n spaces before every line of text, which ends in a newline.
func indent(n int, text string) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSuffix(text, "\n"), "\n", "\n"+pad) + "\n"
}
