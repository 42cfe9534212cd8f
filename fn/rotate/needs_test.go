package rotate_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
)

// The read plan drops Secrets and ConfigMaps no step reads; what the
// function says must not depend on it. Each input goes through the fast
// path (which applies the plan) and through kyaml's reader (which keeps
// every item): the outputs must be the same bytes.
func TestReadPlanKeepsWhatMessagesName(t *testing.T) {
	const head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
	const policy = "functionConfig:\n  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata:\n    name: p\n  spec:\n    now: \"2026-06-01T00:00:00Z\"\n    trustBundles:\n    - name: b\n      sources:\n      - secret: {name: ca-root, namespace: apps}\n      target: {name: trust}\n"
	tests := map[string]string{
		// The source is missing; the nearest Secret holds no certificate,
		// and the error names it and its keys.
		"a near name without a certificate": "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: ca-roots\n    namespace: apps\n  stringData:\n    token: abc\n",
		// The same name in another namespace.
		"the same name elsewhere": "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: ca-root\n    namespace: other\n  stringData:\n    token: abc\n",
		// A Secret no step reads, with a key twice: refused either way.
		"a duplicate key": "- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: unrelated\n    namespace: apps\n  stringData:\n    token: abc\n    token: def\n",
	}
	for name, items := range tests {
		t.Run(name, func(t *testing.T) {
			input := []byte(head + items + policy)
			p := rotate.Processor{Now: func() time.Time { return testpki.GoldenNow }}
			var fast, slow bytes.Buffer
			handled, fastErr := resio.RunFast(input, &fast, rotate.Needs, p.Run)
			require.True(t, handled, "the input must take the fast path: %v", fastErr)
			slowErr := resio.RunKyaml(input, &slow, p.Run)
			require.Error(t, fastErr)
			require.Error(t, slowErr)
			require.Equal(t, slow.String(), fast.String())
		})
	}
}
