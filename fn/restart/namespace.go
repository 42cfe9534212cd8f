package restart

import (
	"iter"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The one namespace rule of every command that matches a reader to what
// it reads (render's restarts and warnings, diff's consumers, init's
// readers of a CA). An object whose manifest names no namespace - what
// `kubectl create secret --dry-run=client -o yaml` writes - lands in
// whatever namespace it is applied to: it may be the object a reference of
// any namespace names. So an unknown namespace matches every namespace, on
// the safe side: more readers, never fewer. Where something other than
// the manifest decides the namespace - a kustomization's namespace:, which
// kustomize writes into every namespaced object it builds, over the
// manifest's own - ReadersOptions.Namespace says so, and the namespace it
// gives is matched as any other; one it cannot tell (a base that two
// overlays place in different namespaces) is AnyNamespace, unknown again.
// diff reads kustomizations built, so its objects carry the namespace
// kustomize gives them; init reads the manifests as written and asks the
// builds (initpolicy.Namespaces).

// AnyNamespace is what ReadersOptions.Namespace returns for an object
// applied in several namespaces, or in one it cannot tell: it matches
// every namespace, as a manifest without a namespace does.
const AnyNamespace = "*"

// sameNamespace reports whether an object of namespace a may be the object
// of namespace b: the same namespace, or either unknown ("").
func sameNamespace(a, b string) bool { return a == "" || b == "" || a == b }

// namespaceOf returns the namespace node is applied in: the one known
// returns for it (AnyNamespace: unknown, ""), else its own ("" when it
// names none: unknown).
func namespaceOf(node *yaml.RNode, known func(*yaml.RNode) string) string {
	if known != nil {
		switch ns := known(node); ns {
		case AnyNamespace:
			return ""
		case "":
		default:
			return ns
		}
	}
	return node.GetNamespace()
}

// The rule for copies. A tree may hold several objects a reference can
// name - a repository of many clusters holds the same Secret once per
// cluster, an object without a namespace matches those of every
// namespace - and a reader reads the copies nearest to it: among those of
// its own package (what one render of it reads) when that holds any, else
// among all, the copies whose directory shares the longest leading path
// with the reader's (its cluster's), every one of them when several tie.
// An object the tree holds once is read by every reference that names it.

// parentDir is the directory above dir; dir itself at the top.
func parentDir(dir string) string { return path.Dir(dir) }

// ancestors yields dir and every directory above it, the deepest first.
func ancestors(dir string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for d := dir; ; d = parentDir(d) {
			if !yield(d) || parentDir(d) == d {
				return
			}
		}
	}
}

// within reports whether directory dir is d or below it.
func within(dir, d string) bool {
	switch {
	case dir == d:
		return true
	case d == ".":
		return !strings.HasPrefix(dir, "/")
	case d == "/":
		return strings.HasPrefix(dir, "/")
	}
	return strings.HasPrefix(dir, d+"/")
}
