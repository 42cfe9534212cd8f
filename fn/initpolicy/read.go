package initpolicy

import (
	"errors"
	"io"

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
