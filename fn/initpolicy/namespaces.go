package initpolicy

import (
	"path"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rotate-certs/rotate-certs/fn/kbuild"
	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/restart"
)

// Init reads the manifests as they are written, so that what it proposes
// names the objects of the files; the cluster gets them as kustomize
// builds them, and a kustomization's namespace: is written over the
// namespace of every namespaced object it builds (kubebuilder's
// config/default places config/manager's `namespace: system` in the
// project's namespace). So that init matches readers to what they read in
// the namespaces diff and the cluster see, it asks the builds: the
// namespaces kustomize gives each file's objects (Namespaces), as
// restart.ReadersOptions.Namespace takes them.

// Namespaces returns the namespace kustomize applies each object of the
// files under paths in, by the kustomizations there built as diff and
// check build them (resio.ScanBuilt: offline, the top-most build of a
// base): of the objects of an object's kind that the builds read from its
// file, the one namespace they are all in; restart.AnyNamespace when they
// are in several (a base two overlays place apart: it may be any of
// them); "" for a file no build reads, or whose objects of that kind the
// builds leave without a namespace - the manifest's own then. nil when no
// kustomization under paths builds an object (stdin: none).
func Namespaces(paths []string) func(*yaml.RNode) string {
	if len(paths) == 0 {
		paths = []string{"."} // what Read reads
	}
	var dirs []string
	for _, p := range paths {
		if p != "-" {
			dirs = append(dirs, p)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	origin := func(n *yaml.RNode) string { return n.GetAnnotations(kbuild.OriginAnnotation)[kbuild.OriginAnnotation] }
	// Only the built objects carry an origin: no plain file is parsed
	// for them (ScanBuilt parses a plain file only when it may hold a
	// policy).
	tree := resio.ScanBuilt(dirs, nil, func(n *yaml.RNode) bool { return origin(n) != "" })
	built := map[fileKind]map[string]bool{}
	for _, n := range tree.Kept {
		k := fileKind{cleanFile(origin(n)), n.GetKind()}
		if built[k] == nil {
			built[k] = map[string]bool{}
		}
		built[k][n.GetNamespace()] = true
	}
	if len(built) == 0 {
		return nil
	}
	return func(n *yaml.RNode) string {
		namespaces := built[fileKind{cleanFile(layout.FileOf(n)), n.GetKind()}]
		switch len(namespaces) {
		case 0:
			return ""
		case 1:
			for ns := range namespaces {
				return ns
			}
		}
		return restart.AnyNamespace
	}
}

// fileKind is the objects of one kind in one file.
type fileKind struct{ file, kind string }

// cleanFile names a file as both the walk and kustomize's origins name it:
// slash-separated and cleaned.
func cleanFile(f string) string {
	if f == "" {
		return ""
	}
	return path.Clean(filepath.ToSlash(f))
}
