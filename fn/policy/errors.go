package policy

import (
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// FieldErrors is every problem found in a policy, each a *kube.FieldError
// at a field path such as "spec.trustBundles[0].retain.maxPrevious"; it is
// an error when non-empty.
type FieldErrors []*kube.FieldError

// Error joins the problems, one per line.
func (es FieldErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es *FieldErrors) add(field, format string, args ...any) {
	*es = append(*es, kube.FieldErrorf(field, format, args...))
}
