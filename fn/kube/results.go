package kube

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// ResultLine renders a result on one line: "Kind ns/name field: message (file)".
func ResultLine(r *framework.Result) string {
	var b strings.Builder
	if r.ResourceRef != nil {
		ref := Ref{Kind: r.ResourceRef.Kind, Namespace: r.ResourceRef.Namespace, Name: r.ResourceRef.Name}
		b.WriteString(ref.String())
	}
	if r.Field != nil && r.Field.Path != "" {
		b.WriteString(" " + r.Field.Path)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(r.Message)
	if r.File != nil && r.File.Path != "" {
		b.WriteString(" (" + r.File.Path + ")")
	}
	return b.String()
}

// ErrorResults is the error of a failed run of the function: its error
// results, printed one per line.
type ErrorResults framework.Results

// Error lists the errors, one per line.
func (e ErrorResults) Error() string {
	lines := make([]string, 0, len(e))
	for _, r := range e {
		lines = append(lines, "error: "+ResultLine(r))
	}
	return strings.Join(lines, "\n")
}

// Results returns the error results: what tells the function's report
// from any other error (exit.Printer prints it as it is).
func (e ErrorResults) Results() framework.Results { return framework.Results(e) }
