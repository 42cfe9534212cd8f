package layouts

import (
	"strings"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// Istio's plug-in CA as a kustomization feeds it to a cluster. The layout
// is the one Istio documents for plugging in a CA (istio.io,
// tasks/security/cert-management/plugin-ca-cert: `kubectl create secret
// generic cacerts -n istio-system --from-file=cluster1/ca-cert.pem
// --from-file=cluster1/ca-key.pem --from-file=cluster1/root-cert.pem
// --from-file=cluster1/cert-chain.pem`), with the files its certificate
// tools write (istio/istio tools/certs/Makefile.selfsigned.mk at
// 2653ac4eef3a58995ed8f36f937055e9818fe83f: root-cert.pem and root-key.pem
// at the top, each cluster's ca-cert.pem, ca-key.pem, root-cert.pem and
// cert-chain.pem in its own directory), fed to a secretGenerator instead of
// the kubectl command.

// PluginCA is one cluster's plug-in CA: Istio's "CA certificate" (an
// intermediate) and its key, the root its chain ends at, and the roots the
// cluster trusts.
type PluginCA struct {
	// Intermediate is ca-cert.pem, its key ca-key.pem.
	Intermediate testpki.Cert
	// Root follows the intermediate in cert-chain.pem.
	Root testpki.Cert
	// Roots are root-cert.pem; Root alone when empty.
	Roots []testpki.Cert
}

// pluginCAFiles are the files of a plug-in CA, in the order Istio's
// documentation passes them.
var pluginCAFiles = []string{"ca-cert.pem", "ca-key.pem", "root-cert.pem", "cert-chain.pem"}

// Data is the data of Secret cacerts, by key: the four files.
func (p PluginCA) Data() map[string]string {
	roots := p.Roots
	if len(roots) == 0 {
		roots = []testpki.Cert{p.Root}
	}
	return map[string]string{
		"ca-cert.pem":    pemOf(p.Intermediate),
		"ca-key.pem":     string(p.Intermediate.KeyPEM()),
		"root-cert.pem":  pemOf(roots...),
		"cert-chain.pem": pemOf(p.Intermediate, p.Root),
	}
}

// Files is Data as the files of directory dir (slash-separated; "" is the
// top), as Istio's tools write a cluster's (cluster1/).
func (p PluginCA) Files(dir string) map[string]string {
	out := map[string]string{}
	for name, text := range p.Data() {
		out[join(dir, name)] = text
	}
	return out
}

// RootFiles are root-cert.pem and root-key.pem of root in directory dir,
// where Istio's tools write the root (`make root-ca`) and no build reads
// it.
func RootFiles(dir string, root testpki.Cert) map[string]string {
	return map[string]string{join(dir, "root-cert.pem"): pemOf(root), join(dir, "root-key.pem"): string(root.KeyPEM())}
}

// CACertsGenerator is the secretGenerator entry (a list item) that makes
// Secret cacerts of the plug-in CA's files in directory dir, relative to
// the kustomization, without a hash in its name: istiod reads it by name.
func CACertsGenerator(dir string) string {
	var b strings.Builder
	b.WriteString("- name: cacerts\n  files:\n")
	for _, f := range pluginCAFiles {
		b.WriteString("  - " + join(dir, f) + "\n")
	}
	b.WriteString("  options:\n    disableNameSuffixHash: true\n")
	return b.String()
}

// PluginCAKustomization is a kustomization in namespace istio-system of
// resources, whose secretGenerator makes cacerts of cluster1's files
// (PluginCA.Files("cluster1") beside it).
func PluginCAKustomization(resources ...string) string {
	var b strings.Builder
	b.WriteString("namespace: istio-system\nresources:\n")
	for _, r := range resources {
		b.WriteString("- " + r + "\n")
	}
	b.WriteString("secretGenerator:\n" + CACertsGenerator("cluster1"))
	return b.String()
}

// join is dir/name, or name at the top.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return strings.TrimSuffix(dir, "/") + "/" + name
}
