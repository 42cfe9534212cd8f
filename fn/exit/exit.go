// Package exit is how every command of rotate-certs ends and what it says
// on stderr: one error type that carries the exit status (Error, with the
// named codes OK, Failed and Usage) and one printer (Printer) that every
// message to stderr passes through, scrubbed of key material
// (kube.ScrubMessage) and prefixed with the command's name. Commands
// return their error; main prints it with the printer and exits with
// CodeOf.
package exit

import (
	"errors"
	"fmt"
)

// Code is an exit status. Every command uses these three, with the same
// meaning (docs/reference/commands.md, "Results and exit codes").
type Code int

const (
	// OK: the command did what it was asked; check found nothing inside
	// --fail-within or expired.
	OK Code = 0
	// Failed: the command ran and failed (an error result, a file that
	// could not be written), or check found a certificate inside
	// --fail-within or expired.
	Failed Code = 1
	// Usage: the command was called the wrong way (an unknown command or
	// flag, a wrong number of arguments, a bad flag value, function mode
	// given what is not a ResourceList with a RotationPolicy), or check
	// could not read all its input. Usage wins over Failed.
	Usage Code = 2
)

// Error ends a command with an exit status. Err is what the printer
// prints (nil when the command printed all it had to say); several
// problems are one errors.Join, a line each.
type Error struct {
	Code Code
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// with returns the error that ends a command with code and prints err
// (nil: nothing).
func with(code Code, err error) error { return &Error{Code: code, Err: err} }

// Fail returns the error of a command that ran and failed: exit status
// Failed, err printed; nil for nil.
func Fail(err error) error { return orNil(Failed, err) }

// Misuse returns the error of a command called the wrong way: exit status
// Usage, err printed; nil for nil.
func Misuse(err error) error { return orNil(Usage, err) }

func orNil(code Code, err error) error {
	if err == nil {
		return nil
	}
	return with(code, err)
}

// CodeOf is the exit status err ends a command with: OK for nil, an
// Error's own code, Failed for any other error.
func CodeOf(err error) Code {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Failed
}
