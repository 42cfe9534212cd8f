package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func decodeRestart(t *testing.T, restart string) (*RotationPolicy, error) {
	t.Helper()
	raw := `{"apiVersion":"rotate-certs.dev/v1alpha1","kind":"RotationPolicy","metadata":{"name":"p"},
	"spec":{"trustBundles":[{"name":"gw","sources":[{"secret":{"name":"ca","namespace":"gw"}}],"target":{"name":"trust"}` +
		restart + `}]}}`
	return decodeJSON([]byte(raw))
}

func TestRestartDefaults(t *testing.T) {
	p, err := decodeRestart(t, ``)
	require.NoError(t, err)
	r := p.Spec.TrustBundles[0].Restart
	require.NotNil(t, r.Auto)
	assert.True(t, *r.Auto, "auto defaults to true")
	assert.True(t, r.AutoEnabled())
	assert.Empty(t, r.Workloads)

	p, err = decodeRestart(t, `,"restart":{"auto":false,"workloads":[{"kind":"Rollout","name":"api","namespace":"gw"}]}`)
	require.NoError(t, err)
	r = p.Spec.TrustBundles[0].Restart
	assert.False(t, r.AutoEnabled())
	assert.Equal(t, []WorkloadRef{{Kind: "Rollout", Name: "api", Namespace: "gw"}}, r.Workloads)
	assert.Equal(t, "Rollout gw/api", r.Workloads[0].String())
}

func TestRestartValidation(t *testing.T) {
	cases := []struct {
		name    string
		restart string
		field   string
		msg     string
	}{
		{"unsupported kind", `,"restart":{"workloads":[{"kind":"Deployment","name":"a"},{"kind":"CronJob","name":"b"}]}`,
			"spec.trustBundles[0].restart.workloads[1].kind", `"CronJob" is not one of Deployment, StatefulSet, DaemonSet, Rollout`},
		{"kind is case-sensitive", `,"restart":{"workloads":[{"kind":"deployment","name":"a"}]}`,
			"spec.trustBundles[0].restart.workloads[0].kind", `"deployment" is not one of`},
		{"missing name", `,"restart":{"workloads":[{"kind":"Deployment"}]}`,
			"spec.trustBundles[0].restart.workloads[0].name", "required"},
		{"duplicate", `,"restart":{"workloads":[{"kind":"Deployment","name":"a","namespace":"x"},{"kind":"Deployment","name":"a","namespace":"x"}]}`,
			"spec.trustBundles[0].restart.workloads[1]", "duplicate of spec.trustBundles[0].restart.workloads[0]"},
		{"unknown field", `,"restart":{"workloads":[{"kind":"Deployment","name":"a","apiVersion":"apps/v1"}]}`,
			"spec.trustBundles[0].restart.workloads[0].apiVersion", "unknown field"},
		{"auto not a bool", `,"restart":{"auto":"yes"}`,
			"spec.trustBundles[0].restart.auto", "must be true or false"},
		{"unknown mesh", `,"restart":{"mesh":"consul"}`, "spec.trustBundles[0].restart.mesh", `"consul" is not one of linkerd, istio`},
		{"empty selection", `,"restart":{"injected":[{}]}`, "spec.trustBundles[0].restart.injected[0]", "selects every workload"},
		{"bad selector", `,"restart":{"injected":[{"podSelector":{"matchExpressions":[{"key":"a","operator":"Is"}]}}]}`,
			"spec.trustBundles[0].restart.injected[0].podSelector", "is not one of In, NotIn, Exists, DoesNotExist"},
		{"unknown selection field", `,"restart":{"injected":[{"podLabels":{"a":"b"}}]}`,
			"spec.trustBundles[0].restart.injected[0].podLabels", "unknown field"},
		{"annotation not a string", `,"restart":{"mesh":"linkerd","exclude":[{"podAnnotations":{"a":true}}]}`,
			"spec.trustBundles[0].restart.exclude[0].podAnnotations.a", "must be a string"},
		{"exclude without injected", `,"restart":{"exclude":[{"podAnnotations":{"a":"b"}}]}`,
			"spec.trustBundles[0].restart.exclude", "the bundle has none"},
		{"size missing", `,"restart":{"waves":{"interval":"1h"}}`, "spec.trustBundles[0].restart.waves.size", "required"},
		{"size zero", `,"restart":{"waves":{"size":0}}`, "spec.trustBundles[0].restart.waves.size", "at least 1"},
		{"size fraction", `,"restart":{"waves":{"size":2.5}}`, "spec.trustBundles[0].restart.waves.size", "not a whole number"},
		{"size percent range", `,"restart":{"waves":{"size":"150%"}}`, "spec.trustBundles[0].restart.waves.size", "out of range"},
		{"size word", `,"restart":{"waves":{"size":"ten"}}`, "spec.trustBundles[0].restart.waves.size", "is not a size"},
		{"size list", `,"restart":{"waves":{"size":[1]}}`, "spec.trustBundles[0].restart.waves.size", "must be a number or a string"},
		{"interval negative", `,"restart":{"waves":{"size":2,"interval":"-1h"}}`, "spec.trustBundles[0].restart.waves.interval", "must be positive"},
		{"interval word", `,"restart":{"waves":{"size":2,"interval":"daily"}}`, "spec.trustBundles[0].restart.waves.interval", "invalid duration"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeRestart(t, tc.restart)
			var fes FieldErrors
			require.ErrorAs(t, err, &fes)
			require.Len(t, fes, 1, fes.Error())
			assert.Equal(t, tc.field, fes[0].Field)
			assert.Contains(t, fes[0].Err.Error(), tc.msg)
		})
	}
}

func TestRestartInjectedAndWaves(t *testing.T) {
	p, err := decodeRestart(t, `,"restart":{"mesh":"istio",
		"injected":[{"namespaceSelector":{"matchLabels":{"team":"a"}},"podAnnotations":{"vault.hashicorp.com/agent-inject":"true"}}],
		"exclude":[{"podSelector":{"matchExpressions":[{"key":"batch","operator":"Exists"}]}}],
		"waves":{"size":"10%"}}`)
	require.NoError(t, err)
	r := p.Spec.TrustBundles[0].Restart
	assert.Equal(t, MeshIstio, r.Mesh)
	assert.True(t, r.InjectsTrust())
	require.Len(t, r.Injected, 1)
	assert.True(t, r.Injected[0].NeedsNamespace())
	assert.Equal(t, "namespace labels team=a, pod annotations vault.hashicorp.com/agent-inject=true", r.Injected[0].String())
	assert.Equal(t, "pod labels batch", r.Exclude[0].String())
	require.NotNil(t, r.Waves)
	assert.Equal(t, WaveSize{Percent: 10}, r.Waves.Size)
	assert.Equal(t, defaultWaveInterval, r.Waves.IntervalOrDefault(), "interval defaults to a day")

	p, err = decodeRestart(t, `,"restart":{"waves":{"size":20,"interval":"72h"}}`)
	require.NoError(t, err)
	w := p.Spec.TrustBundles[0].Restart.Waves
	assert.Equal(t, WaveSize{Count: 20}, w.Size)
	assert.Equal(t, "72h0m0s", w.Interval.String())
	assert.False(t, p.Spec.TrustBundles[0].Restart.InjectsTrust())
}

func TestWaveSizeOf(t *testing.T) {
	for _, tc := range []struct {
		size        WaveSize
		n           int
		want, waves int
	}{
		{WaveSize{Percent: 10}, 200, 20, 10},
		{WaveSize{Percent: 10}, 25, 3, 9},
		{WaveSize{Percent: 10}, 5, 1, 5},
		{WaveSize{Percent: 100}, 7, 7, 1},
		{WaveSize{Count: 20}, 200, 20, 10},
		{WaveSize{Count: 20}, 10, 20, 1},
		{WaveSize{Count: 1}, 3, 1, 3},
	} {
		assert.Equal(t, tc.want, tc.size.of(tc.n), "%s of %d", tc.size, tc.n)
		assert.Equal(t, tc.waves, tc.size.MaxWaves(tc.n), "waves of %s of %d", tc.size, tc.n)
	}
}

func TestSelectionStringShowsOnlyPlainText(t *testing.T) {
	key := "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIHHH9owHQO61RYTr9w4ppP6lFbCcgMh+IKe8rWYVBqPP\n-----END PRIVATE KEY-----\n"
	s := Selection{PodAnnotations: map[string]string{"a": key}, NamespaceAnnotations: map[string]string{"team": "a"}}
	assert.NotContains(t, s.String(), "PRIVATE")
	assert.NotContains(t, s.String(), "MC4CAQAw")
	assert.Contains(t, s.String(), "namespace annotations team=a, pod annotations <a string of")
}
