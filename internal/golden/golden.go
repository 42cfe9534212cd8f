// Package golden is how tests reach the repository's shared test data and
// golden files: Path finds testdata/ and examples/ from the tests of any
// package (no "../../" reaching across packages), YAMLFiles lists every
// YAML file of the repository, and Check compares an
// output with its golden file, or rewrites the file when UPDATE_GOLDEN=1
// (make golden).
package golden

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// module is the path of the repository's root module; test/ holds modules
// of its own, which Path walks past.
const module = "github.com/rotate-certs/rotate-certs"

// Root returns the repository's top directory: the nearest directory at or
// above the working directory whose go.mod declares the root module.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declares(data, module) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s at or above the working directory", module)
		}
		dir = parent
	}
}

// declares reports whether a go.mod declares module m.
func declares(gomod []byte, m string) bool {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" {
			return f[1] == m
		}
	}
	return false
}

// Path joins elem to the repository's top directory, such as
// Path("testdata", "golden"). It panics when the top directory cannot be
// found: tests run inside the repository.
func Path(elem ...string) string {
	root, err := Root()
	if err != nil {
		panic("golden: " + err.Error())
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// YAMLFiles returns every *.yaml and *.yml file of the repository (but
// those under .git, bin and dist, the release's output), by path from the top directory: a corpus of
// real manifests, examples and test data for tests that hold a reader to
// another.
func YAMLFiles(t testing.TB) map[string][]byte {
	t.Helper()
	root := Path()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || path == filepath.Join(root, "dist")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".yaml") && !strings.HasSuffix(path, ".yml") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files[rel] = b
		return err
	})
	if err != nil {
		t.Fatalf("golden: reading the repository's YAML files: %v", err)
	}
	return files
}

// Updating reports whether golden files are being rewritten
// (UPDATE_GOLDEN=1).
func Updating() bool { return os.Getenv("UPDATE_GOLDEN") == "1" }

// Check fails t unless actual is the content of the golden file at path.
// With UPDATE_GOLDEN=1 it writes actual to path first; review the diff.
func Check(t testing.TB, path string, actual []byte) {
	t.Helper()
	if Updating() {
		if err := os.WriteFile(path, actual, 0o644); err != nil {
			t.Fatalf("updating %s: %v", path, err)
		}
	}
	expected, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing %s: run with UPDATE_GOLDEN=1 (make golden) and review it: %v", path, err)
	}
	if !bytes.Equal(expected, actual) {
		t.Fatalf("output differs from %s (make golden rewrites it; review the diff):\n%s", path, firstDifference(string(expected), string(actual)))
	}
}

// firstDifference shows the first line where want and got differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return "(same lines, different bytes)"
}

// Encode writes items as they are, annotations included (kyaml's writer
// would drop the index annotations), each ended by "---": what tests
// compare when two reads of the same files must give the same objects.
func Encode(t testing.TB, items []*yaml.RNode) string {
	t.Helper()
	var b strings.Builder
	for _, item := range items {
		s, err := item.String()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(s + "---\n")
	}
	return b.String()
}
