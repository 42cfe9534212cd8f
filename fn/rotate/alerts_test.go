package rotate_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/alerts"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ruleOf returns the PrometheusRule of a function output, as YAML.
func ruleOf(t *testing.T, out []byte) string {
	t.Helper()
	for _, n := range parseResourceList(t, out).items {
		if n.GetKind() == "PrometheusRule" {
			return n.MustString()
		}
	}
	t.Fatal("no PrometheusRule in the output")
	return ""
}

// TestAlertsIdempotent feeds the output back in: the committed rule is
// updated in place and comes out byte-identical.
func TestAlertsIdempotent(t *testing.T) {
	in := goldenInput(t, filepath.Join(goldenDir, "alerts-prometheusrule"))
	first, err := execute(t, in)
	require.NoError(t, err)
	second, err := execute(t, withoutResults(t, first))
	require.NoError(t, err)
	require.Equal(t, ruleOf(t, first), ruleOf(t, second))
	require.Contains(t, string(second), "critical from NotAfter-168h0m0s; unchanged")
	third, err := execute(t, withoutResults(t, second))
	require.NoError(t, err)
	require.Equal(t, string(second), string(third), "a second render of the output changes nothing")
}

// TestAlertsDeterministic: the same certificates in another input order
// give the same rule bytes.
func TestAlertsDeterministic(t *testing.T) {
	in := goldenInput(t, filepath.Join(goldenDir, "alerts-prometheusrule"))
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(in), KeepReaderAnnotations: true}
	items, err := rw.Read()
	require.NoError(t, err)
	for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
		items[i], items[j] = items[j], items[i]
	}
	var buf bytes.Buffer
	require.NoError(t, (&kio.ByteReadWriter{Writer: &buf, FunctionConfig: rw.FunctionConfig, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion, KeepReaderAnnotations: true}).Write(items))
	a, err := execute(t, in)
	require.NoError(t, err)
	b, err := execute(t, buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, ruleOf(t, a), ruleOf(t, b))
}

// TestAlertsUpdateKeepsUserFields: an existing rule keeps its comments,
// labels and annotations; only spec.groups is managed.
func TestAlertsUpdateKeepsUserFields(t *testing.T) {
	in := string(goldenInput(t, filepath.Join(goldenDir, "alerts-prometheusrule")))
	in = strings.Replace(in, "items:\n", `items:
- # owned by the monitoring team
  apiVersion: monitoring.coreos.com/v1
  kind: PrometheusRule
  metadata:
    name: rotate-certs-expiry
    namespace: monitoring
    labels:
      team: platform
    annotations:
      argocd.argoproj.io/sync-wave: "5"
  spec:
    groups: []
`, 1)
	out, err := execute(t, []byte(in))
	require.NoError(t, err)
	rule := ruleOf(t, out)
	for _, s := range []string{"# owned by the monitoring team", "team: platform", `argocd.argoproj.io/sync-wave: "5"`, "release: 'kube-prometheus-stack'", "name: rotate-certs.gateway"} {
		require.Contains(t, rule, s)
	}
	rules := 0
	for _, n := range parseResourceList(t, out).items {
		if n.GetKind() == "PrometheusRule" {
			rules++
		}
	}
	require.Equal(t, 1, rules, "the existing rule is updated, not duplicated")
	require.Contains(t, string(out), "; updated")
}

// alertsManaged reports whether node is the PrometheusRule of spec.alerts,
// whose groups and labels the function writes
// (TestAlertsUpdateKeepsUserFields checks that the rest of it stays).
func alertsManaged(pol *policy.RotationPolicy, node *yaml.RNode) bool {
	a := pol.Spec.Alerts
	return a != nil && node.GetApiVersion() == alerts.APIVersion && node.GetKind() == alerts.Kind &&
		node.GetNamespace() == a.Namespace && node.GetName() == a.Name
}

func withoutResults(t *testing.T, out []byte) []byte {
	t.Helper()
	node, err := yaml.Parse(string(out))
	require.NoError(t, err)
	require.NoError(t, node.PipeE(yaml.Clear("results")))
	return []byte(node.MustString())
}
