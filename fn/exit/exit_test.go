package exit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// What each error ends a command with, and what the printer says of it.
func TestErrorsAndPrinter(t *testing.T) {
	report := kube.ErrorResults{{Severity: framework.Error, Message: "bad", ResourceRef: &yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{Kind: "Secret"}, NameMeta: yaml.NameMeta{Name: "s", Namespace: "n"}}}}
	for _, tc := range []struct {
		name    string
		err     error
		code    Code
		printed string
	}{
		{"nil", nil, OK, ""},
		{"Fail of nil", Fail(nil), OK, ""},
		{"any error", errors.New("boom"), Failed, "rotate-certs x: boom\n"},
		{"usage", Misuse(errors.New("unknown flag")), Usage, "rotate-certs x: unknown flag\n"},
		{"said already", with(Failed, nil), Failed, ""},
		{"one line per problem", Misuse(errors.Join(errors.New("a"), errors.New("b"))), Usage, "rotate-certs x: a\nrotate-certs x: b\n"},
		{"the function's report as it is", Fail(errors.Join(report, fmt.Errorf("package p: %v", "c"))), Failed,
			"error: Secret n/s: bad\nrotate-certs x: package p: c\n"},
		{"key material cut", Fail(errors.New("name \"-----BEGIN RSA PRIVATE KEY-----\nMIIE\" is bad")), Failed,
			"rotate-certs x: name \"<input text not shown: it may hold key material>\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			NewPrinter(&b, "rotate-certs x").Error(tc.err)
			require.Equal(t, tc.code, CodeOf(tc.err))
			require.Equal(t, tc.printed, b.String())
		})
	}
	var b strings.Builder
	p := NewPrinter(&b, "rotate-certs x")
	p.Note("n")
	p.Warn("w")
	require.Equal(t, "rotate-certs x: note: n\nrotate-certs x: warning: w\n", b.String())
	Printer{}.Print("nothing, nowhere")
}
