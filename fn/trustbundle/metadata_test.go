package trustbundle_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

const metadataBundle = `  - name: gw
    sources: [{secret: {name: src, namespace: gw}}]
    target:
      name: trust
      namespaces: [gw, edge]
      metadata:
        labels: {app.kubernetes.io/part-of: gateway, reloader: "true"}
        annotations: {argocd.argoproj.io/sync-options: Replace=true}
`

func TestTargetMetadataOnEveryTarget(t *testing.T) {
	existing := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: trust\n  namespace: gw\n  labels:\n    team: edge\n    reloader: \"false\" # was off\n  annotations:\n    owner: me\ndata:\n  ca.crt: " + b64(caNew, caOld) + "\n"
	r := render(t, metadataBundle, parseItems(t, sourceSecret(caNew), existing))
	require.Zero(t, r.results.ExitCode(), "%v", r.results)
	for _, ns := range []string{"gw", "edge"} {
		node := r.target(t, "gw", ns).Node
		require.Equal(t, "gateway", node.GetLabels()["app.kubernetes.io/part-of"], ns)
		require.Equal(t, "true", node.GetLabels()["reloader"], ns)
		require.Equal(t, "Replace=true", node.GetAnnotations()["argocd.argoproj.io/sync-options"], ns)
	}
	gw := r.target(t, "gw", "gw")
	require.Equal(t, "edge", gw.Node.GetLabels()["team"], "other labels are kept")
	require.Equal(t, "me", gw.Node.GetAnnotations()["owner"], "other annotations are kept")
	require.Regexp(t, `reloader: .true. # was off`, gw.Node.MustString(), "a label that is replaced keeps its comment")
	require.True(t, gw.Changed)
	require.False(t, gw.TrustChanged, "metadata is not trust: nothing rolls")

	// Rendering the output again changes nothing.
	again := render(t, metadataBundle, r.again(t))
	require.Equal(t, r.text(), again.text())
	require.False(t, again.target(t, "gw", "gw").Changed)
}

func TestTargetMetadataNullLabels(t *testing.T) {
	existing := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: trust\n  namespace: gw\n  labels:\ndata:\n  ca.crt: " + b64(caNew) + "\n"
	r := render(t, metadataBundle, parseItems(t, sourceSecret(caNew), existing))
	require.Zero(t, r.results.ExitCode(), "%v", r.results)
	require.Equal(t, "gateway", r.target(t, "gw", "gw").Node.GetLabels()["app.kubernetes.io/part-of"])
}

// Two bundles that write one object and set one label to different values
// would fight on every render: an error naming both.
func TestTargetMetadataConflict(t *testing.T) {
	bundles := `  - name: a
    sources: [{secret: {name: src, namespace: gw}}]
    target: {name: trust, key: a.crt, metadata: {labels: {tier: edge}}}
  - name: b
    sources: [{secret: {name: src, namespace: gw}}]
    target: {name: trust, key: b.crt, metadata: {labels: {tier: core}}}
`
	r := render(t, bundles, parseItems(t, sourceSecret(caNew)))
	errs := r.matching("set its label tier to different values")
	require.Len(t, errs, 1, "%v", r.results)
	require.Equal(t, framework.Error, errs[0].Severity)
	require.Contains(t, errs[0].Message, `bundles "a" and "b"`)

	// The same value from both is fine.
	same := `  - name: a
    sources: [{secret: {name: src, namespace: gw}}]
    target: {name: trust, key: a.crt, metadata: {labels: {tier: edge}}}
  - name: b
    sources: [{secret: {name: src, namespace: gw}}]
    target: {name: trust, key: b.crt, metadata: {labels: {tier: edge}}}
`
	r = render(t, same, parseItems(t, sourceSecret(caNew)))
	require.Zero(t, r.results.ExitCode(), "%v", r.results)
}
