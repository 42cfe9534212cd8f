package alerts_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/alerts"
	"github.com/stretchr/testify/require"
)

// TestPromtoolDriftAlert evaluates the drift alert with promtool over
// series shaped as cert-manager's controller exports them (name,
// namespace and the issuer labels): root-ca is renewed in the cluster at
// minute 30 (its live NotAfter moves off the one the render saw) and fires
// 15 minutes later; other-ca keeps the rendered NotAfter and stays quiet,
// and so does a Certificate not issued yet (0).
func TestPromtoolDriftAlert(t *testing.T) {
	bin := promtool(t)
	seen := time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC)    // NotAfter the render saw: 1811808000
	other := time.Date(2028, 10, 31, 0, 0, 0, 0, time.UTC) // 1856563200
	rules := groupsFile(t, alerts.WithDrift(nil, []alerts.Drift{
		{Bundle: "platform", Namespace: "cert-manager", Name: "root-ca", Source: "Secret cert-manager/root-ca", NotAfter: seen, SHA256: "aa"},
		{Bundle: "platform", Namespace: "cert-manager", Name: "other-ca", Source: "Secret cert-manager/other-ca", NotAfter: other, SHA256: "bb"},
		{Bundle: "platform", Namespace: "cert-manager", Name: "new-ca", Source: "Secret cert-manager/new-ca", NotAfter: other, SHA256: "cc"},
	}))
	out, err := exec.Command(bin, "check", "rules", rules).CombinedOutput()
	require.NoError(t, err, "promtool check rules:\n%s", out)
	require.Contains(t, string(out), "SUCCESS: 3 rules found")

	series := func(name string) string {
		return fmt.Sprintf(`%s{name="%s",namespace="cert-manager",issuer_name="selfsigned",issuer_kind="ClusterIssuer",issuer_group="cert-manager.io"}`,
			alerts.CertManagerExpiryMetric, name)
	}
	fires := fmt.Sprintf(`
    - exp_labels: {severity: warning, bundle: platform, role: drift, certificate: cert-manager/root-ca, fingerprint: aa,
        name: root-ca, namespace: cert-manager, issuer_name: selfsigned, issuer_kind: ClusterIssuer, issuer_group: cert-manager.io}
      exp_annotations:
        summary: 'CA renewed in the cluster; git has not caught up - snapshot and render (Certificate cert-manager/root-ca, trust bundle "platform")'
        description: 'CA renewed in the cluster; git has not caught up - snapshot and render. cert-manager Certificate cert-manager/root-ca writes Secret cert-manager/root-ca, a source of trust bundle "platform"; the last render saw its CA (sha256 aa) with NotAfter %s, and the cluster now reports 2030-03-17 17:46:40 +0000 UTC. Snapshot the Secret (rotate-certs snapshot) and render, so that the bundle carries the new CA beside the old one.'`,
		seen.Format(time.RFC3339))
	test := fmt.Sprintf(`rule_files: [%q]
evaluation_interval: 1m
tests:
- interval: 1m
  input_series:
  - series: '%s'
    values: '%dx29 1900000000x60'
  - series: '%s'
    values: '%dx90'
  - series: '%s'
    values: '0x90'
  alert_rule_test:
  - {eval_time: 20m, alertname: %[7]s, exp_alerts: []}
  - {eval_time: 40m, alertname: %[7]s, exp_alerts: []}
  - eval_time: 46m
    alertname: %[7]s
    exp_alerts:%s
  - eval_time: 89m
    alertname: %[7]s
    exp_alerts:%[8]s
`, rules, series("root-ca"), seen.Unix(), series("other-ca"), other.Unix(), series("new-ca"), alerts.DriftAlertName, fires)
	path := filepath.Join(t.TempDir(), "test.yaml")
	require.NoError(t, os.WriteFile(path, []byte(test), 0o644))
	out, err = exec.Command(bin, "test", "rules", path).CombinedOutput()
	require.NoError(t, err, "promtool test rules:\n%s\ntest file:\n%s", out, test)
	require.Contains(t, string(out), "SUCCESS")
}
