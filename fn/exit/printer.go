package exit

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// Printer writes one command's messages on stderr. Every message passes
// kube.ScrubMessage whole, whoever wrote it, and a line of the command's
// own starts with its name: "rotate-certs: " in function mode,
// "rotate-certs COMMAND: " for a subcommand, "note: " after it for a note.
// The function's report (its error results, "error: KIND NS/NAME FIELD:
// ...", and its warnings) reads the same under every command and is
// printed as it is.
type Printer struct {
	w      io.Writer
	prefix string
}

// NewPrinter returns the printer of the command named command (its path:
// "rotate-certs", "rotate-certs check") on w.
func NewPrinter(w io.Writer, command string) Printer {
	return Printer{w: w, prefix: command + ": "}
}

// Write writes b, one message, scrubbed (a message cut short keeps its
// line end): Printer is the io.Writer that code printing on its own (the
// function's warnings summary) is given. It reports all of b written.
// The zero Printer prints nothing.
func (p Printer) Write(b []byte) (int, error) {
	if p.w == nil {
		return len(b), nil
	}
	msg := kube.ScrubMessage(string(b))
	if bytes.HasSuffix(b, []byte("\n")) && !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	if _, err := io.WriteString(p.w, msg); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Print prints msg as a line of the command's own.
func (p Printer) Print(msg string) {
	_, _ = p.Write([]byte(p.prefix + strings.TrimSuffix(msg, "\n") + "\n"))
}

// Note prints msg as a note of the command's own.
func (p Printer) Note(msg string) { p.Print("note: " + msg) }

// Warn prints msg as a warning of the command's own.
func (p Printer) Warn(msg string) { p.Print("warning: " + msg) }

// Error prints the error a command ended with: nothing for nil or an
// Error without a message, each error of an errors.Join on its own, the
// function's error results as they are, anything else as a line of the
// command's own.
func (p Printer) Error(err error) {
	for e, ok := err.(*Error); ok; e, ok = err.(*Error) {
		err = e.Err
	}
	switch joined, _ := err.(interface{ Unwrap() []error }); {
	case err == nil:
	case joined != nil:
		for _, part := range joined.Unwrap() {
			p.Error(part)
		}
	case IsReport(err):
		_, _ = p.Write([]byte(err.Error() + "\n"))
	default:
		p.Print(err.Error())
	}
}

// IsReport reports whether err is the function's error results
// (kube.ErrorResults, also beneath rotate's policy error): lines that name
// their resource, printed as they are.
func IsReport(err error) bool {
	var r interface{ Results() framework.Results }
	return errors.As(err, &r)
}
