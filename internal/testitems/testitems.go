// Package testitems reads the resources of a test's input written as a
// template over the fixtures of internal/testpki: the one helper the
// tests of the packages that scan and report certificates (fn/inventory,
// fn/report) share.
package testitems

import (
	"bytes"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Items expands tmpl with testpki.TemplateFuncs ({{b64 "ca-2026"}},
// {{pem 4 "ca-2026"}}, ...) and reads the resources it holds, without
// the reader's path and index annotations. It fails t when either step
// fails.
func Items(t testing.TB, tmpl string) []*yaml.RNode {
	t.Helper()
	b, err := testpki.ExpandTemplate(t.Name(), tmpl)
	require.NoError(t, err)
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
	require.NoError(t, err)
	return nodes
}
