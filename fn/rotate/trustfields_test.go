package rotate_test

import (
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/fn/trustbundle"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ownTrustFields returns, for an input item that holds a bundle outside a
// Secret or ConfigMap, a function that removes from it what the function
// may write there: the caBundle fields the policy injects into (only the
// named webhooks' when it names some), a ClusterTrustBundle's
// spec.trustBundle, and rotate-certs' own inLine source of a trust-manager
// Bundle. Everything else on such an item must come out as it went in.
func ownTrustFields(pol *policy.RotationPolicy, item *yaml.RNode) (func(*testing.T, *yaml.RNode), bool) {
	kind, name := item.GetKind(), item.GetName()
	for _, b := range pol.Spec.TrustBundles {
		switch {
		case kind == string(kube.TargetClusterTrustBundle) && string(b.Target.Kind) == kind && b.Target.Name == name:
			return func(t *testing.T, c *yaml.RNode) { clearAt(t, c, "trustBundle", "spec") }, true
		case kind == string(kube.TargetBundle) && string(b.Target.Kind) == kind && b.Target.Name == name:
			return withoutOwnInLine, true
		}
	}
	if _, ok := kube.InjectKinds().Lookup(kind); !ok {
		return nil, false
	}
	all, webhooks := false, map[string]bool{}
	for _, b := range pol.Spec.TrustBundles {
		if item.GetAnnotations(policy.InjectAnnotation)[policy.InjectAnnotation] == b.Name {
			all = true
		}
		for _, in := range b.Inject {
			if in.Kind != kind || in.Name != name {
				continue
			}
			all = all || len(in.Webhooks) == 0
			for _, w := range in.Webhooks {
				webhooks[w] = true
			}
		}
	}
	if !all && len(webhooks) == 0 {
		return nil, false
	}
	return func(t *testing.T, c *yaml.RNode) {
		switch kind {
		case policy.KindAPIService:
			clearAt(t, c, "caBundle", "spec")
		case policy.KindCustomResourceDefinition:
			clearAt(t, c, "caBundle", "spec", "conversion", "webhook", "clientConfig")
		default:
			hooks, err := c.Pipe(yaml.Lookup("webhooks"))
			require.NoError(t, err)
			entries, err := hooks.Elements()
			require.NoError(t, err)
			for _, e := range entries {
				if n := e.Field("name"); n != nil && (all || webhooks[n.Value.YNode().Value]) {
					clearAt(t, e, "caBundle", "clientConfig")
				}
			}
		}
	}, true
}

// clearAt removes field from the mapping at path under node.
func clearAt(t *testing.T, node *yaml.RNode, field string, path ...string) {
	t.Helper()
	m, err := node.Pipe(yaml.Lookup(path...))
	require.NoError(t, err)
	if m != nil {
		require.NoError(t, m.PipeE(yaml.Clear(field)))
	}
}

// withoutOwnInLine removes rotate-certs' inLine sources from a Bundle.
func withoutOwnInLine(t *testing.T, c *yaml.RNode) {
	seq, err := c.Pipe(yaml.Lookup("spec", "sources"))
	require.NoError(t, err)
	var keep []*yaml.Node
	for _, e := range seq.YNode().Content {
		v, err := yaml.NewRNode(e).Pipe(yaml.Lookup("inLine"))
		require.NoError(t, err)
		if v != nil && strings.HasPrefix(v.YNode().Value, trustbundle.ManagedByLine+"rotate-certs.dev/") {
			continue
		}
		keep = append(keep, e)
	}
	seq.YNode().Content = keep
}
