package kube

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError is a problem at a field path of an object, such as
// "data.ca.crt" or "spec.template.spec.volumes[0].projected.sources": the
// one error type the packages that read objects return, so that a result
// can point at the field (FieldOf).
type FieldError struct {
	// Field is the dotted field path.
	Field string
	// Err says what is wrong.
	Err error
}

// FieldErrorf returns a *FieldError at field with a formatted message.
func FieldErrorf(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Error returns "field: problem", or the problem alone when no field is
// known.
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// FieldOf returns the field path of a *FieldError in err's chain, or "".
func FieldOf(err error) string {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// SplitFieldError returns the field and message of the *FieldError in
// err's chain, or field and err's message when it holds none.
func SplitFieldError(err error, field string) (string, string) {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe.Field, fe.Err.Error()
	}
	return field, err.Error()
}

// JoinPath writes a field path given as its steps, such as
// ["spec", "template"], as "spec.template".
func JoinPath(path []string) string { return strings.Join(path, ".") }
