package trustdiff

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kbuild"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The identity of an object across the two trees. An object is the same
// on both sides when its directory (a repository of many clusters holds
// the same object once per cluster), API group, kind, namespace and name
// are: renaming a file or moving an API version is no change. Real
// repositories also hold several objects of one name in one directory
// (test fixtures, variants of one object): such an object is ambiguous,
// and is told apart by its file and its place in the file, on both sides
// alike, so that a copy that does not change is not compared with
// another that does.

// id is r's identity across the two trees.
func (r Resource) id() string {
	if r.place == "" {
		return r.name()
	}
	return r.name() + "\x00" + r.place
}

// name is r's identity without its place: its directory, API group, kind,
// namespace and name. A built object's directory is its kustomization's
// (one base built by two overlays is two objects), and a generated name
// counts without the hash of its content (the object whose content
// changes is the same object).
func (r Resource) name() string {
	group, _, _ := strings.Cut(r.APIVersion, "/")
	if !strings.Contains(r.APIVersion, "/") {
		group = ""
	}
	at, name := r.File, r.Name
	if r.Kustomization != "" {
		at = r.Kustomization
	}
	if r.generated != "" {
		name = r.generated
	}
	return path.Dir(at) + "\x00" + group + "\x00" + r.Kind + "\x00" + r.Namespace + "\x00" + name
}

// Duplicate is a name that several objects of one directory of a tree
// share.
type Duplicate struct {
	// resource is the first of them, in tree order.
	resource Resource
	// places are each one's file and document ("FILE#N", N counted from
	// 0), in tree order.
	places []string
	id     string
	// first is the first object's place among the tree's objects.
	first int
}

// Duplicates returns the names that several objects of items share in one
// directory, in tree order; file maps the file a resource was read from
// to the path shown (nil: as read).
func Duplicates(items []*yaml.RNode, file func(string) string) []Duplicate {
	objects := objectsOnly(items)
	// first is, of each name, its first object's index in objects and,
	// once a second one comes, its duplicate's in out; only the
	// duplicates are kept, a fleet's hundred thousand names are not.
	type first struct{ object, dup int }
	at := map[string]first{}
	var out []Duplicate
	for i, item := range objects {
		ref := kube.RefOf(item)
		r := resourceOf(ref, item, file)
		id := r.name()
		f, ok := at[id]
		if !ok {
			at[id] = first{object: i, dup: -1}
			continue
		}
		if f.dup < 0 {
			ref0 := kube.RefOf(objects[f.object])
			r0 := resourceOf(ref0, objects[f.object], file)
			f.dup = len(out)
			at[id] = f
			out = append(out, Duplicate{resource: r0, id: id, first: f.object, places: []string{placeOf(ref0, r0)}})
		}
		out[f.dup].places = append(out[f.dup].places, placeOf(ref, r))
	}
	slices.SortFunc(out, func(a, b Duplicate) int { return a.first - b.first }) // tree order
	return out
}

// Ambiguous returns the names of dups, for Input.Ambiguous: give it the
// duplicates of both sides, so that both tell the objects of such a name
// apart alike.
func Ambiguous(dups ...[]Duplicate) map[string]bool {
	out := map[string]bool{}
	for _, ds := range dups {
		for _, d := range ds {
			out[d.id] = true
		}
	}
	return out
}

// String words a duplicate for a warning.
func (d Duplicate) String() string {
	return fmt.Sprintf("%s is defined %d times in %s (%s): diff tells them apart by file and document",
		d.resource, len(d.places), path.Dir(d.resource.File), strings.Join(d.places, ", "))
}

// placeOf is where ref sits: its file and document.
func placeOf(ref kube.Ref, r Resource) string {
	return fmt.Sprintf("%s#%d", r.File, ref.Index)
}

// resourceOf names the object ref (node, nil when unknown) as the result
// shows it: an object a kustomization built by the file it came from and
// the kustomization (kbuild's annotations).
func resourceOf(ref kube.Ref, node *yaml.RNode, file func(string) string) Resource {
	show := func(f string) string {
		if file != nil && f != "" {
			f = file(f)
		}
		return kube.SafePath(f)
	}
	r := Resource{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, File: show(ref.Path)}
	if node == nil || ref.Path == "" {
		return r
	}
	a := node.GetAnnotations(kbuild.OriginAnnotation, kbuild.NameAnnotation)
	if origin := a[kbuild.OriginAnnotation]; origin != "" {
		r.Kustomization, r.File, r.generated = r.File, show(origin), a[kbuild.NameAnnotation]
	}
	return r
}
