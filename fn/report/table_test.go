package report

import (
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/why"
	"github.com/stretchr/testify/require"
)

func wideReport() Report {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	var entries []Entry
	for _, pkg := range []string{"clusters/prod-eu-west-1", "clusters/staging"} {
		entries = append(entries, Entry{
			Type: typeCertificate, pkg: pkg,
			Resource: kube.Ref{APIVersion: "v1", Kind: "Secret", Namespace: "envoy-gateway-system", Name: "envoy-gateway-trust-for-every-namespace"},
			key:      "stringData.value:users[prod-admin].user.client-certificate-data",
			subject:  "CN=a rather long subject name,O=an organisation with a long name,C=DE", issuer: "CN=issuer", sha256: strings.Repeat("ab", 32),
			notAfter: now.Add(100 * 24 * time.Hour), DaysLeft: 100, Status: StatusOK,
		})
	}
	reissue := why.Reissue{Package: "clusters/prod-eu-west-1", Resource: entries[0].Resource, Key: "data.tls.crt", Subject: "CN=leaf", SHA256: strings.Repeat("cd", 32),
		Bundle: "gateway", Issuer: "CN=example-ca-old,O=rotate-certs test", IssuerSHA256: strings.Repeat("ef", 32),
		IssuerLeavesAt: now.Add(30 * 24 * time.Hour), DaysLeft: 30, State: why.ReissuePending}
	return Report{now: now, warnWithin: 30 * 24 * time.Hour, failWithin: 0, Entries: entries, reissues: []why.Reissue{reissue}}
}

// TestRenderTableNeverCuts: like kubectl's, the default table never cuts
// a value - a resource name, a key, a subject are what a user greps for -
// and its columns line up; wide adds columns and keeps the package whole;
// --no-headers prints only rows.
func TestRenderTableNeverCuts(t *testing.T) {
	r := wideReport()
	out := string(RenderTable(r, TableOptions{}))
	require.NotContains(t, out, "…")
	for _, whole := range []string{
		"Secret envoy-gateway-system/envoy-gateway-trust-for-every-namespace",
		"stringData.value:users[prod-admin].user.client-certificate-data",
		"CN=a rather long subject name,O=an organisation with a long name,C=DE",
		"CN=example-ca-old,O=rotate-certs test",
		"clusters/prod-eu-west-1 ",
	} {
		require.Contains(t, out, whole)
	}
	lines := strings.Split(out, "\n")
	require.Equal(t, strings.Index(lines[0], "SUBJECT"), strings.Index(lines[1], "CN=a rather"), "columns line up:\n%s", out)
	require.Contains(t, out, "fail within 0d", "durations in days, 0d not 0s")

	wide := string(RenderTable(r, TableOptions{Wide: true}))
	require.Contains(t, wide, "Secret envoy-gateway-system/envoy-gateway-trust-for-every-namespace")
	require.Contains(t, wide, "stringData.value:users[prod-admin].user.client-certificate-data")
	require.Contains(t, wide, "SHA256")
	require.NotContains(t, wide, "…")

	rows := string(RenderTable(r, TableOptions{NoHeaders: true}))
	require.NotContains(t, rows, "PACKAGE")
	require.NotContains(t, rows, "certificate(s)")
	require.Equal(t, 4, len(strings.Split(strings.TrimRight(rows, "\n"), "\n")), "two rows, an empty line, one re-issue row:\n%s", rows)

	// One package only: no package column.
	r.Entries = r.Entries[:1]
	r.reissues = nil
	require.NotContains(t, string(RenderTable(r, TableOptions{})), "PACKAGE")
}
