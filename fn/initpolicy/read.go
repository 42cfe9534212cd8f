package initpolicy

import (
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/rotate-certs/rotate-certs/fn/layout"
	"github.com/rotate-certs/rotate-certs/fn/resio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Read loads every resource from paths (see resio.ReadPaths). A file that is
// not YAML (a Helm template, say) is skipped and reported in warnings, not
// an error: init scans whole repositories. A path that cannot be read, and
// stdin that is not YAML, are errors.
func Read(paths []string, stdin io.Reader) (items []*yaml.RNode, warnings []string, err error) {
	set := resio.ReadPaths(paths, stdin)
	warnings = append(warnings, set.Notes...)
	var errs []error
	for _, p := range set.Problems {
		if p.NotYAML && p.Path != "-" {
			warnings = append(warnings, "skipped "+p.Message)
			continue
		}
		errs = append(errs, errors.New(p.Message))
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return set.Items, warnings, nil
}

// rootFiles are the files that make their directory a package root where
// no policy is yet: where kustomize and kpt look for a package's
// kustomization and Kptfile.
var rootFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization", "Kptfile"}

// PackageRoots returns the directories of items' files (as their paths
// name them) that hold a kustomization or a Kptfile on disk - read or not:
// a package's .krmignore often leaves its kustomization out. ProposeTree
// takes them as package roots.
func PackageRoots(items []*yaml.RNode) []string {
	seen := map[string]bool{}
	var roots []string
	for _, it := range items {
		file := layout.FileOf(it)
		if file == "" || file == "-" {
			continue
		}
		dir := path.Dir(path.Clean(file))
		if seen[dir] {
			continue
		}
		seen[dir] = true
		for _, name := range rootFiles {
			if st, err := os.Stat(filepath.Join(filepath.FromSlash(dir), name)); err == nil && st.Mode().IsRegular() {
				roots = append(roots, dir)
				break
			}
		}
	}
	return roots
}
