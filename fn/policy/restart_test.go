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
	return DecodeJSON([]byte(raw))
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
