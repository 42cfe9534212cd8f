//go:build devtools

// Command importrules fails when a package of the module depends, directly
// or through other packages of the module, on a package the layout keeps
// it apart from (docs/development.md, the package map): the rules never
// depend on presentation, reading and writing resources never on the
// policy API. make lint runs it. It reads the import lines of the non-test
// Go files of every directory under the module root and needs no build.
//
//	go run ./hack/importrules [ROOT]
package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// module is the import path of the repository's module.
const module = "github.com/rotate-certs/rotate-certs/"

// rule forbids every package of from to depend on any package of on.
// Paths are relative to the module ("fn/report").
type rule struct {
	from []string
	on   []string
	why  string
}

// rules is the layout that is checked.
var rules = []rule{
	{
		from: []string{"fn/trustbundle", "fn/anchors", "fn/restart", "fn/clusterapi", "fn/certmanager", "fn/alerts",
			"fn/inventory", "fn/policy", "fn/pki", "fn/kube", "fn/truststore", "fn/rotate", "fn/trustdiff", "fn/why"},
		on:  []string{"fn/report"},
		why: "rules, certificate finding and what they explain never depend on presentation",
	},
	{
		from: []string{"fn/resio", "fn/kbuild", "fn/atomicfs", "fn/kube"},
		on:   []string{"fn/policy"},
		why:  "reading and writing resources never depends on the policy API",
	},
	{
		from: []string{"fn/kbuild"},
		on:   []string{"fn/resio"},
		why:  "the kustomize build is a step of reading, below it",
	},
	{
		from: []string{"fn/atomicfs"},
		on:   []string{"fn/resio", "fn/kube"},
		why:  "file transactions know files, not resources",
	},
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	imports, err := moduleImports(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "importrules:", err)
		os.Exit(2)
	}
	bad := violations(imports, rules)
	for _, v := range bad {
		fmt.Println(v)
	}
	if len(bad) > 0 {
		fmt.Fprintf(os.Stderr, "importrules: %d forbidden dependencies: see the package map in docs/development.md\n", len(bad))
		os.Exit(1)
	}
}

// moduleImports maps each package directory under root (relative,
// slash-separated) to the packages of the module its non-test files
// import.
func moduleImports(root string) (map[string][]string, error) {
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if dep, ok := strings.CutPrefix(p, module); ok && !slices.Contains(out[pkg], dep) {
				out[pkg] = append(out[pkg], dep)
			}
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		return nil
	})
	return out, err
}

// violations lists, for every rule, each package it covers that depends on
// a forbidden one, with the chain of imports that leads there.
func violations(imports map[string][]string, rules []rule) []string {
	var out []string
	for _, r := range rules {
		for _, p := range append(append([]string(nil), r.from...), r.on...) {
			if _, ok := imports[p]; !ok {
				out = append(out, fmt.Sprintf("%s: no such package; a rule names it (%s): update the rules", p, r.why))
			}
		}
		for _, from := range r.from {
			for _, on := range r.on {
				if chain := path(imports, from, on); chain != nil {
					out = append(out, fmt.Sprintf("%s depends on %s (%s): %s", from, on, strings.Join(chain, " -> "), r.why))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// path returns a chain of imports from from to on, or nil when from does
// not depend on on (breadth first: the shortest chain).
func path(imports map[string][]string, from, on string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, dep := range imports[p] {
			if _, seen := prev[dep]; seen {
				continue
			}
			prev[dep] = p
			if dep == on {
				var chain []string
				for q := dep; q != ""; q = prev[q] {
					chain = append([]string{q}, chain...)
				}
				return chain
			}
			queue = append(queue, dep)
		}
	}
	return nil
}
