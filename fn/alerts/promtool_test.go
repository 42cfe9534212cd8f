package alerts_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/alerts"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	warnWithin = 30 * 24 * time.Hour
	failWithin = 7 * 24 * time.Hour
)

// promtool returns the path of promtool or skips the test.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found: install the Debian package prometheus (make test-tools does when it can) to check the emitted rules")
	}
	return p
}

// ruleFile renders the PrometheusRule for certs exactly as the function
// emits it and writes its spec (a Prometheus rule file) to a temp dir.
func ruleFile(t *testing.T, certs []alerts.Certificate) string {
	t.Helper()
	return groupsFile(t, alerts.Groups(certs, warnWithin, failWithin))
}

// groupsFile writes groups as the function emits them (a PrometheusRule's
// spec, which is a Prometheus rule file) to a temp dir.
func groupsFile(t *testing.T, groups []alerts.Group) string {
	t.Helper()
	node := alerts.New("monitoring", "rotate-certs-expiry", "")
	_, err := alerts.Apply(node, groups, nil)
	require.NoError(t, err)
	spec, err := node.Pipe(yaml.Lookup("spec"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(spec.MustString()), 0o644))
	return path
}

func fixtureCerts() []alerts.Certificate {
	return []alerts.Certificate{
		{Cert: testpki.Fixture("ca-2026").Cert, Bundle: "gateway", Role: alerts.RoleCA, Where: []string{"Secret envoy-gateway-system/envoy-gateway-trust data.ca.crt"}},
		{Cert: testpki.Fixture("ca-2025").Cert, Bundle: "gateway", Role: alerts.RoleCA, Where: []string{"Secret envoy-gateway-system/envoy-gateway-trust data.ca.crt"}},
		{Cert: testpki.Fixture("leaf-old").Cert, Bundle: "gateway", Role: alerts.RoleLeaf, Where: []string{"Secret envoy-gateway-system/ratelimit-client data.tls.crt"}},
		{Cert: testpki.Fixture("signer-b-1").Cert, Bundle: "kube", Role: alerts.RoleCA, Where: []string{"ConfigMap kube-public/cluster-info data.kubeconfig"}},
	}
}

func TestPromtoolCheckRules(t *testing.T) {
	bin := promtool(t)
	path := ruleFile(t, fixtureCerts())
	out, err := exec.Command(bin, "check", "rules", path).CombinedOutput()
	require.NoError(t, err, "promtool check rules:\n%s", out)
	require.Contains(t, string(out), "SUCCESS: 8 rules found")
}

// TestPromtoolTemplateInSubject: a subject is data. Prometheus expands
// templates in labels and annotations, so "{{" in a certificate's subject must
// neither break the rule file nor be evaluated when the alert fires.
func TestPromtoolTemplateInSubject(t *testing.T) {
	bin := promtool(t)
	for _, cn := range []string{"evil {{ unclosed", "evil {{ .Bad }}", "x{{{y}}}"} {
		t.Run(cn, func(t *testing.T) {
			ca := testpki.NewCA(cn, testpki.Date(2026, 1, 1), testpki.Days(365))
			rules := ruleFile(t, []alerts.Certificate{{Cert: ca.Cert, Bundle: "gateway", Role: alerts.RoleCA, Where: []string{"Secret ns/trust data.ca.crt"}}})
			out, err := exec.Command(bin, "check", "rules", rules).CombinedOutput()
			require.NoError(t, err, "promtool check rules:\n%s", out)

			// When it fires, the subject label and the summary read the
			// subject as it is.
			subject := "CN=" + cn + ",O=rotate-certs test"
			fp := pki.FingerprintOf(ca.Cert).String()
			critAt := ca.Cert.NotAfter.Unix() - int64(failWithin/time.Second)
			test := fmt.Sprintf(`rule_files: [%q]
evaluation_interval: 1d
tests:
- interval: 1d
  input_series: []
  alert_rule_test:
  - eval_time: %ds
    alertname: %s
    exp_alerts:
    - exp_labels: {severity: critical, bundle: gateway, role: ca, subject: %q, fingerprint: %q}
      exp_annotations:
        summary: %q
        description: %q
`, rules, critAt, alerts.AlertName, subject, fp,
				fmt.Sprintf(`CA certificate %s of trust bundle "gateway" expires 2027-01-01T00:00:00Z`, subject),
				fmt.Sprintf(`CA certificate %s (sha256 %s) of trust bundle "gateway" expires in 7d 0h 0m 0s (NotAfter 2027-01-01T00:00:00Z). `+
					`Warning from 2026-12-02T00:00:00Z, critical from 2026-12-25T00:00:00Z. Found in Secret ns/trust data.ca.crt. Rotate the CA (and re-render the bundle) before then.`, subject, fp))
			path := filepath.Join(t.TempDir(), "test.yaml")
			require.NoError(t, os.WriteFile(path, []byte(test), 0o644))
			out, err = exec.Command(bin, "test", "rules", path).CombinedOutput()
			require.NoError(t, err, "promtool test rules:\n%s", out)
		})
	}
}

// TestPromtoolAlertsFireOnTime evaluates the emitted rules with promtool
// at the unix seconds around each threshold. The expected times are
// computed here from the fixture dates, not from the code under test.
func TestPromtoolAlertsFireOnTime(t *testing.T) {
	bin := promtool(t)
	// ca-2025 expires 2027-06-01T00:00:00Z: warning from 2027-05-02,
	// critical from 2027-05-25.
	ca := testpki.Fixture("ca-2025").Cert
	notAfter := time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC).Unix()
	warnAt := time.Date(2027, 5, 2, 0, 0, 0, 0, time.UTC).Unix()
	critAt := time.Date(2027, 5, 25, 0, 0, 0, 0, time.UTC).Unix()
	require.Equal(t, int64(1811808000), notAfter)
	w, c := alerts.FiringTimes(ca.NotAfter, warnWithin, failWithin)
	require.Equal(t, warnAt, w)
	require.Equal(t, critAt, c)

	certs := []alerts.Certificate{{Cert: ca, Bundle: "gateway", Role: alerts.RoleCA, Where: []string{"Secret ns/trust data.ca.crt"}}}
	rules := ruleFile(t, certs)
	fp := pki.FingerprintOf(ca).String()
	labels := func(sev string) string {
		return fmt.Sprintf(`{severity: %s, bundle: gateway, role: ca, subject: "CN=ca-2025,O=rotate-certs test", fingerprint: "%s"}`, sev, fp)
	}
	desc := func(state string) string {
		return fmt.Sprintf(`CA certificate CN=ca-2025,O=rotate-certs test (sha256 %s) of trust bundle "gateway" %s (NotAfter 2027-06-01T00:00:00Z). `+
			`Warning from 2027-05-02T00:00:00Z, critical from 2027-05-25T00:00:00Z. Found in Secret ns/trust data.ca.crt. Rotate the CA (and re-render the bundle) before then.`, fp, state)
	}
	annotations := func(state string) string {
		return fmt.Sprintf(`{summary: 'CA certificate CN=ca-2025,O=rotate-certs test of trust bundle "gateway" expires 2027-06-01T00:00:00Z', description: '%s'}`, desc(state))
	}
	// Alert checks on a one-day grid (the thresholds fall on midnights);
	// exact-second checks of the expressions themselves below.
	type alertAt struct {
		at       int64
		severity string // "" = nothing fires
		state    string
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rule_files: [%q]\nevaluation_interval: 1d\ntests:\n- interval: 1d\n  input_series: []\n  alert_rule_test:\n", rules)
	for _, a := range []alertAt{
		{warnAt - 86400, "", ""},
		{warnAt, "warning", "expires in 30d 0h 0m 0s"},
		{critAt - 86400, "warning", "expires in 8d 0h 0m 0s"},
		{critAt, "critical", "expires in 7d 0h 0m 0s"},
		{notAfter, "critical", "expires in 0s"},
		{notAfter + 86400, "critical", "has expired"},
	} {
		fmt.Fprintf(&b, "  - eval_time: %ds\n    alertname: %s\n    exp_alerts:", a.at, alerts.AlertName)
		if a.severity == "" {
			b.WriteString(" []\n")
			continue
		}
		fmt.Fprintf(&b, "\n    - exp_labels: %s\n      exp_annotations: %s\n", labels(a.severity), annotations(a.state))
	}
	writeExpressionTests(&b, notAfter, warnAt, critAt)
	testFile := filepath.Join(t.TempDir(), "test.yaml")
	require.NoError(t, os.WriteFile(testFile, []byte(b.String()), 0o644))
	start := time.Now()
	out, err := exec.Command(bin, "test", "rules", testFile).CombinedOutput()
	require.NoError(t, err, "promtool test rules:\n%s\ntest file:\n%s", out, b.String())
	require.Contains(t, string(out), "SUCCESS")
	t.Logf("promtool test rules: %s", time.Since(start).Round(time.Millisecond))
}

// writeExpressionTests writes promtool checks of the alert expressions to
// the exact second: each is empty one second before its threshold and
// holds the seconds left from the threshold on.
func writeExpressionTests(b *strings.Builder, notAfter, warnAt, critAt int64) {
	warnExpr := fmt.Sprintf("(vector(%d - time()) <= 2592000) > 604800", notAfter)
	critExpr := fmt.Sprintf("vector(%d - time()) <= 604800", notAfter)
	b.WriteString("  promql_expr_test:\n")
	for _, e := range []struct {
		expr  string
		at    int64
		empty bool
		value int64
	}{
		{expr: warnExpr, at: warnAt - 1, empty: true},
		{expr: warnExpr, at: warnAt, value: 2592000},
		{expr: warnExpr, at: critAt - 1, value: 604801},
		{expr: warnExpr, at: critAt, empty: true},
		{expr: critExpr, at: critAt - 1, empty: true},
		{expr: critExpr, at: critAt, value: 604800},
		{expr: critExpr, at: notAfter + 1, value: -1},
	} {
		fmt.Fprintf(b, "  - expr: %q\n    eval_time: %ds\n    exp_samples:", e.expr, e.at)
		if e.empty {
			b.WriteString(" []\n")
			continue
		}
		fmt.Fprintf(b, "\n    - labels: '{}'\n      value: %d\n", e.value)
	}
}
