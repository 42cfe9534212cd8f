//go:build devtools

// Command funclen fails when a Go function or method, test code included,
// is longer than the limit the project keeps (80 lines from its func line
// to its closing brace): make lint runs it over the repository's Go
// directories.
//
//	go run ./hack/funclen [-max 80] DIR...
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	limit := flag.Int("max", 80, "the longest function allowed, in lines")
	flag.Parse()
	long, err := longFunctions(flag.Args(), *limit)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	for _, l := range long {
		fmt.Println(l)
	}
	if len(long) > 0 {
		fmt.Fprintf(os.Stderr, "funclen: %d function(s) over %d lines: split them\n", len(long), *limit)
		os.Exit(1)
	}
}

// longFunctions lists "file:line: name is N lines" for every function
// declared in a .go file under roots that is longer than limit lines.
func longFunctions(roots []string, limit int) ([]string, error) {
	fset := token.NewFileSet()
	var long []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
				if n := end.Line - start.Line + 1; n > limit {
					long = append(long, fmt.Sprintf("%s:%d: %s is %d lines", path, start.Line, fn.Name.Name, n))
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return long, nil
}
