package policy

import (
	"errors"
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

// Unwrap returns the problems, for errors.Is and errors.As.
func (es FieldErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// ErrNoFunctionConfig is the problem of a run without a functionConfig:
// the RotationPolicy must be it.
var ErrNoFunctionConfig = errors.New("no functionConfig")

// ErrConfigMapFunctionConfig is the problem of a run whose functionConfig
// is a v1 ConfigMap: what kpt fn eval sends without --fn-config.
var ErrConfigMapFunctionConfig = errors.New("functionConfig is v1 ConfigMap")

func (es *FieldErrors) add(field, format string, args ...any) {
	*es = append(*es, kube.FieldErrorf(field, format, args...))
}
