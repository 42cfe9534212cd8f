package certmanager

// cert-manager's cainjector writes the caBundle of every webhook
// configuration, APIService and CustomResourceDefinition annotated with one
// of these (cert-manager pkg/controller/cainjector, v1.21): the CA of a
// Certificate (inject-ca-from: namespace/name), of a Secret
// (inject-ca-from-secret: namespace/name), or the API server's own CA
// (inject-apiserver-ca: "true").
const (
	InjectCAFrom       = "cert-manager.io/inject-ca-from"
	InjectCAFromSecret = "cert-manager.io/inject-ca-from-secret"
	InjectAPIServerCA  = "cert-manager.io/inject-apiserver-ca"
)

// CAInjectorOwns returns the annotation by which cainjector owns the
// caBundle fields of an object with these annotations, and its value; ok
// is false when cainjector leaves them alone.
func CAInjectorOwns(annotations map[string]string) (key, value string, ok bool) {
	for _, k := range []string{InjectCAFrom, InjectCAFromSecret} {
		if v, found := annotations[k]; found {
			return k, v, true
		}
	}
	if v := annotations[InjectAPIServerCA]; v == "true" {
		return InjectAPIServerCA, v, true
	}
	return "", "", false
}
