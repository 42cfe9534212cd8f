package rotate_test

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Feeding a render's output back in must not only leave the items alone
// (TestInvariantIdempotent) but say so: every target unchanged, nothing
// rolled. A target that reports "updated" on every render hides the one
// render where something did change.
func TestRerenderReportsNothingChanged(t *testing.T) {
	for _, dir := range goldenCases(t) {
		if strings.HasPrefix(filepath.Base(dir), "err-") {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			first, err := execute(t, goldenInput(t, dir))
			require.NoError(t, err)
			second, err := execute(t, first)
			require.NoError(t, err)
			results := parseResourceList(t, second).results
			for _, word := range []string{"; updated", "; created", "rolled, its trust changed", "moved ", "is immutable"} {
				require.NotContains(t, results, word, "the second render changed something")
			}
		})
	}
}

// adoptionInput is a gateway whose trust Secret already holds ca-2026 and
// ca-2025, written by hand as trustPEM, and a consumer that reads it
// through env (always rolled when its trust changes).
func adoptionInput(source string, trustPEM string) []byte {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	return []byte(`apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: rotate-certs.dev/v1alpha1
  kind: RotationPolicy
  metadata: {name: p}
  spec:
    now: "2026-11-22T00:00:00Z"
    trustBundles:
    - name: gateway
      sources:
      - secret: {name: ca, namespace: gw}
      target: {name: trust}
items:
- apiVersion: v1
  kind: Secret
  metadata: {name: ca, namespace: gw}
  data: {ca.crt: ` + b64(source) + `}
- apiVersion: v1
  kind: Secret
  metadata: {name: trust, namespace: gw}
  data: {ca.crt: ` + b64(trustPEM) + `}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: app, namespace: gw}
  spec:
    replicas: 2
    template:
      spec:
        containers:
        - name: app
          env:
          - name: CA
            valueFrom: {secretKeyRef: {name: trust, key: ca.crt}}
`)
}

func TestAdoptingTheSameSetRollsNobody(t *testing.T) {
	canonical := pemText("ca-2026", "ca-2025")
	tests := []struct {
		name  string
		trust string
		roll  bool
	}{
		{"canonical", canonical, false},
		{"oldest first", pemText("ca-2025", "ca-2026"), false},
		{"CRLF", strings.ReplaceAll(pemText("ca-2025", "ca-2026"), "\n", "\r\n"), false},
		{"text around and a repeat", "# gateway trust\n" + pemText("ca-2025") + "next:\n" + pemText("ca-2026", "ca-2025") + "-- end --\n", false},
		{"a CA is missing", pemText("ca-2025"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := renderRestart(t, adoptionInput(pemText("ca-2026"), tt.trust))
			require.Equal(t, canonical, string(renderedBundle(t, adoptionInput(pemText("ca-2026"), tt.trust))), "rewritten in canonical form")
			hash := trustHashOf(t, r.items[gwKey("Deployment", "app")])
			if tt.roll {
				require.NotEmpty(t, hash, "the trusted set changed: the consumer rolls")
				return
			}
			require.Empty(t, hash, "the trusted set is the same: nobody rolls")

			// The next real change rolls it.
			next := renderRestart(t, r.input(t, func(items []*yaml.RNode) {
				src := items[0]
				require.NoError(t, src.PipeE(yaml.Lookup("data"), yaml.SetField("ca.crt", yaml.NewStringRNode(base64.StdEncoding.EncodeToString(testpki.Fixture("ca-2027").PEM())))))
			}))
			require.NotEmpty(t, trustHashOf(t, next.items[gwKey("Deployment", "app")]))
		})
	}
}

// Two bundles writing different keys of one Secret agree on its
// annotations, however often it is rendered.
func TestSharedTargetAnnotationsAreStable(t *testing.T) {
	r := renderRestart(t, goldenInput(t, filepath.Join(goldenDir, "target-shared-object")))
	trust := r.items[gwKey("Secret", "trust")]
	for range 3 {
		r = renderRestart(t, r.input(t, nil))
		require.Equal(t, trust, r.items[gwKey("Secret", "trust")])
	}
	node, err := yaml.Parse(trust)
	require.NoError(t, err)
	require.Equal(t, "2026-11-15T00:00:00Z", node.GetAnnotations()[trustbundle.RotatedAtAnnotation], "the later of the two bundles' rotations")
}
