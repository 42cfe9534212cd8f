package trustbundle

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/certmanager"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
)

// cainjectorOwns refuses an injection into an object whose caBundle
// fields cert-manager's cainjector owns (an inject-ca-from,
// inject-ca-from-secret or inject-apiserver-ca annotation): cainjector
// would overwrite what rotate-certs writes, and a GitOps tool would show
// the object out of sync forever. The error names the annotation and the
// two ways out. It reports whether the injection may go on.
func (r *caBundles) cainjectorOwns(in injection) bool {
	key, value, owned := certmanager.CAInjectorOwns(in.node.GetAnnotations())
	if !owned {
		return true
	}
	ref := kube.RefOf(in.node)
	ours := fmt.Sprintf("remove %s from the bundle's inject list", in.path)
	if in.path == "" {
		ours = fmt.Sprintf("remove the object's %s: %s annotation", policy.InjectAnnotation, r.bundle.Name)
	}
	r.errorf(ref, kube.AnnotationField(key),
		"bundle %q: %s is annotated %s: %s, so cert-manager's cainjector writes its caBundle and would overwrite what rotate-certs writes (two writers: the object never stays in sync) - either remove the %s annotation to let rotate-certs own the caBundle, or %s to leave it to cainjector",
		r.bundle.Name, ref, key, kube.Quote(value), key, ours)
	return false
}
