package main

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/stretchr/testify/require"
)

// largeList is a ResourceList of about size bytes (padded with an
// unrelated ConfigMap's value) and a valid policy; indented writes its
// items indented under items:, which only kyaml's reader reads.
func largeList(size int, indented bool) string {
	head := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: padding\n  data:\n    blob: "
	tail := "\nfunctionConfig:\n  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n" +
		"  metadata:\n    name: p\n  spec:\n    clusterAPI:\n      certificatesExpiryDays: 21\n"
	s := head + strings.Repeat("x", size-len(head)-len(tail)) + tail
	if indented {
		s = strings.Replace(s, "items:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: padding\n  data:\n",
			"items:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: padding\n    data:\n", 1)
		s = strings.Replace(s, "\n    blob: ", "\n      blob: ", 1)
	}
	return s
}

// TestKyamlPathIsCapped: a list larger than resio.MaxKyamlInputBytes is
// refused, with no output and a message saying why, when it is not in the
// canonical layout (it would need about 70 times its size in kyaml's
// reader); the same list in the canonical layout is read and passed
// through.
func TestKyamlPathIsCapped(t *testing.T) {
	size := resio.MaxKyamlInputBytes + 1<<20
	tests := map[string]struct {
		indented bool
		wantCode int
	}{
		"canonical: fast path": {indented: false, wantCode: 0},
		"indented: refused":    {indented: true, wantCode: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, largeList(size, tc.indented))
			require.Equal(t, tc.wantCode, code, stderr)
			if tc.wantCode == 0 {
				require.Contains(t, stdout, "name: padding")
				return
			}
			require.Empty(t, stdout, "no partial output")
			require.Contains(t, stderr, "not in the block layout kustomize and kpt write")
			require.Contains(t, stderr, "kpt fn source")
			require.Contains(t, stderr, "line 4: items indented", "the reason and where")
		})
	}
	// Below the cap the indented list is read by kyaml.
	stdout, stderr, code := runCLI(t, largeList(1<<20, true))
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "name: padding")
}
