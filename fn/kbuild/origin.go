package kbuild

import (
	"path/filepath"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/api/hasher"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Tracing a built object to its file. The top kustomization asks kustomize
// for its origin annotations (offline adds originAnnotations to its
// buildMetadata, which kustomize hands down to every base and component):
// each object then says the file it was read from, or the kustomization
// whose generator made it. They are turned into rotate-certs' own
// annotations and taken off again unless the kustomization asked for them
// itself (so the objects are what `kustomize build` prints).
//
// Each object carries:
//   - the path annotation (internal.config.kubernetes.io/path): the
//     kustomization file that was built. It says where the object sits in
//     the repository - its package, its neighbours, its identity - as a
//     plain file's path does: what one build makes is one place, and the
//     same base built by two overlays is two;
//   - OriginAnnotation: the file it came from (a resource's own file, the
//     kustomization of a generator), for the reader;
//   - NameAnnotation, on a generated object whose name kustomize suffixed
//     with the hash of its content: the name without it, by which the
//     object is the same object when its content changes.

// OriginAnnotation names, on a built object, the file it came from: the
// resource's file, or the kustomization whose generator made it.
const OriginAnnotation = "internal.rotate-certs.dev/origin"

// NameAnnotation is, on a built object whose name kustomize suffixed with
// the hash of its content, the name before the suffix.
const NameAnnotation = "internal.rotate-certs.dev/name"

// kustomizeOrigin is kustomize's origin annotation.
const kustomizeOrigin = "config.kubernetes.io/origin"

// trace annotates each built object and the functions read, and keeps
// them as the build's items.
func (b *builder) trace(nodes []*yaml.RNode) {
	for _, n := range nodes {
		annos := n.GetAnnotations(kustomizeOrigin)
		origin := b.build.File
		var o resource.Origin
		if err := yaml.Unmarshal([]byte(annos[kustomizeOrigin]), &o); err == nil {
			switch {
			case o.Path != "" && o.Repo == "":
				origin = filepath.Join(b.dir, o.Path)
			case o.ConfiguredIn != "":
				origin = filepath.Join(b.dir, o.ConfiguredIn)
			}
		}
		if !b.userOrigins {
			_ = n.PipeE(yaml.ClearAnnotation(kustomizeOrigin))
		}
		restoreLocal(n)
		b.annotate(n, origin)
		if name := nameBeforeHash(n); name != "" {
			_ = n.PipeE(yaml.SetAnnotation(NameAnnotation, name))
		}
		b.build.Items = append(b.build.Items, n)
	}
	for _, f := range b.functions {
		n := f.node.Copy()
		b.annotate(n, b.show(f.file))
		b.build.Items = append(b.build.Items, n)
	}
}

// annotate sets the path annotations of n to the build's kustomization
// file and its origin to origin.
func (b *builder) annotate(n *yaml.RNode, origin string) {
	file := filepath.ToSlash(b.build.File)
	for _, kv := range [][2]string{{kioutil.PathAnnotation, file}, {kioutil.LegacyPathAnnotation, file}, {OriginAnnotation, filepath.ToSlash(origin)}} {
		_ = n.PipeE(yaml.SetAnnotation(kv[0], kv[1]))
	}
	for _, k := range []string{kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation} {
		_ = n.PipeE(yaml.ClearAnnotation(k))
	}
}

// hashLen is the length of the hash kustomize appends to a generated
// name.
const hashLen = 10

// nameBeforeHash returns the name of the ConfigMap or Secret n without the
// hash of its content kustomize appended ("" when it has none): the
// suffix is recomputed with kustomize's own hasher over n named without
// it, so a name that merely looks suffixed is left whole.
func nameBeforeHash(n *yaml.RNode) string {
	if k := n.GetKind(); k != "ConfigMap" && k != "Secret" {
		return ""
	}
	name := n.GetName()
	i := len(name) - hashLen - 1
	if i <= 0 || name[i] != '-' || strings.ContainsAny(name[i+1:], "-.") {
		return ""
	}
	c := n.Copy()
	if err := c.SetName(name[:i]); err != nil {
		return ""
	}
	h, err := (&hasher.Hasher{}).Hash(c)
	if err != nil || h != name[i+1:] {
		return ""
	}
	return kube.Safe(name[:i])
}
