package policy

import (
	"fmt"
	"strings"
)

// FieldError is one problem with the policy, at a field path such as
// "spec.trustBundles[0].retain.maxPrevious".
type FieldError struct {
	// Field is the dotted path of the offending field.
	Field string
	// Message says what is wrong and, where it helps, what is allowed.
	Message string
}

// Error returns "field: message".
func (e FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// FieldErrors is every problem found in a policy; it is an error when
// non-empty.
type FieldErrors []FieldError

// Error joins the problems, one per line.
func (es FieldErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es *FieldErrors) add(field, format string, args ...any) {
	*es = append(*es, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}
