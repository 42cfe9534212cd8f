package rotate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// selectorRenewalPolicy makes bundle corp write trust-manager Bundle
// corp-trust, whose trust namespace is trust.
const selectorRenewalPolicy = `apiVersion: rotate-certs.dev/v1alpha1
kind: RotationPolicy
metadata: {name: corp-trust}
spec:
  now: "2026-11-22T00:00:00Z"
  expiry: {warnWithin: 30d, failWithin: 7d}
  trustBundles:
  - name: corp
    target: {kind: Bundle, name: corp-trust, trustNamespace: trust}
`

// selectorRenewalBundle reads a named ConfigMap (so that the bundle
// holds a CA whatever the selector selects) and the Secrets of the trust
// namespace that the selector %s selects, at ca.crt.
const selectorRenewalBundle = `apiVersion: trust.cert-manager.io/v1alpha1
kind: Bundle
metadata: {name: corp-trust}
spec:
  sources:
  - configMap: {name: roots, key: ca.crt}
  - secret: {selector: %s, key: ca.crt}
  target: {configMap: {key: trust-bundle.pem}}
`

// caCertificate is a cert-manager CA Certificate in namespace ns that
// writes Secret name, with spec.secretTemplate.labels when labels is set;
// isCA is its spec.isCA.
func caCertificate(ns, name, labels string, isCA bool) string {
	template := ""
	if labels != "" {
		template = "\n  secretTemplate: {labels: " + labels + "}"
	}
	return fmt.Sprintf("apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: %[2]s, namespace: %[1]s}\nspec:\n  isCA: %[4]t\n  secretName: %[2]s\n  renewBefore: 4440h%[3]s\n  issuerRef: {name: selfsigned, kind: ClusterIssuer}\n",
		ns, name, template, isCA)
}

// caSnapshot is a snapshot of the Secret cert-manager wrote for
// Certificate name in ns, with labels, holding ca-2025.
func caSnapshot(ns, name, labels string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %[2]s\n  namespace: %[1]s\n  labels: {%[3]s}\n  annotations: {config.kubernetes.io/local-config: \"true\", cert-manager.io/certificate-name: %[2]s}\ntype: kubernetes.io/tls\ndata: {ca.crt: %[4]s, tls.crt: %[4]s}\n",
		ns, name, labels, testpki.B64("ca-2025"))
}

// TestSelectorSourceRenewals: a trust-manager Bundle's secret source that
// selects by label reads the Secrets of its trust namespace whose labels
// match - those git holds, and those cert-manager writes with the labels
// of spec.secretTemplate (and its own controller label). The renewal of
// each CA Certificate that writes one is foreseen, naming the Certificate,
// the bundle and the source by its selector; a Certificate selected whose
// Secret git does not hold is a warning; a Certificate whose labels do not
// match, or in another namespace, gets nothing.
func TestSelectorSourceRenewals(t *testing.T) {
	const root = `{matchLabels: {corp.example.com/root: "true"}}`
	const labels = `{corp.example.com/root: "true"}`
	const forecast = `bundle "corp": CA Certificate trust/root-ca writes its source Secret trust/root-ca (spec.sources[1] of Bundle corp-trust, selector "%s")`
	rootForecast := fmt.Sprintf(forecast, "corp.example.com/root=true")
	for _, tc := range []struct {
		name, selector string
		items          []string
		want           []string // severity, resource and the head of each message
	}{
		{"the Certificate's labels and its Secret's match", root,
			[]string{caCertificate("trust", "root-ca", labels, true), caSnapshot("trust", "root-ca", `corp.example.com/root: "true"`)},
			[]string{"warning Certificate trust/root-ca: " + rootForecast}},
		{"the Certificate's labels match, its snapshot predates them", root,
			[]string{caCertificate("trust", "root-ca", labels, true), caSnapshot("trust", "root-ca", "")},
			[]string{"warning Certificate trust/root-ca: " + rootForecast}},
		{"the Secret's labels match, set outside the Certificate", root,
			[]string{caCertificate("trust", "root-ca", "", true), caSnapshot("trust", "root-ca", `corp.example.com/root: "true"`)},
			[]string{"warning Certificate trust/root-ca: " + rootForecast}},
		{"cert-manager's own label", `{matchLabels: {controller.cert-manager.io/fao: "true"}}`,
			[]string{caCertificate("trust", "root-ca", "", true), caSnapshot("trust", "root-ca", "")},
			[]string{"warning Certificate trust/root-ca: " + fmt.Sprintf(forecast, "controller.cert-manager.io/fao=true")}},
		{"the Secret is not in git", root,
			[]string{caCertificate("trust", "root-ca", labels, true)},
			[]string{`warning Certificate trust/root-ca: bundle "corp": CA Certificate trust/root-ca writes Secret trust/root-ca, which a source selects by the labels cert-manager sets on it (spec.sources[1] of Bundle corp-trust, selector "corp.example.com/root=true"), but the input holds no copy of that Secret: its renewal cannot be foreseen and the render cannot carry its CA once it leaves`}},
		{"labels that do not match", root,
			[]string{caCertificate("trust", "root-ca", `{corp.example.com/root: "false"}`, true), caSnapshot("trust", "root-ca", `corp.example.com/root: "false"`)}, nil},
		{"excluded by matchExpressions", `{matchLabels: {corp.example.com/root: "true"}, matchExpressions: [{key: stage, operator: NotIn, values: [retired]}]}`,
			[]string{caCertificate("trust", "root-ca", `{corp.example.com/root: "true", stage: retired}`, true), caSnapshot("trust", "root-ca", `corp.example.com/root: "true", stage: retired`)}, nil},
		{"another namespace", root,
			[]string{caCertificate("cert-manager", "root-ca", labels, true), caSnapshot("cert-manager", "root-ca", `corp.example.com/root: "true"`)}, nil},
		{"a leaf Certificate", root,
			[]string{caCertificate("trust", "root-ca", labels, false), caSnapshot("trust", "root-ca", `corp.example.com/root: "true"`)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := append([]string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: roots, namespace: trust}\ndata:\n  ca.crt: " + literal(4, pemText("ca-2026")) + "\n",
				fmt.Sprintf(selectorRenewalBundle, tc.selector)}, tc.items...)
			require.Equal(t, tc.want, renewalResults(t, items))
		})
	}
}

// renewalResults runs the function on items under selectorRenewalPolicy
// and returns its results about cert-manager Certificates as
// "severity Kind namespace/name: message head" (up to the first ";").
func renewalResults(t *testing.T, items []string) []string {
	t.Helper()
	nodes := make([]*yaml.RNode, 0, len(items))
	for _, it := range items {
		nodes = append(nodes, yaml.MustParse(it))
	}
	p := rotate.Processor{Now: func() time.Time { return testpki.GoldenNow }}
	_, results, err := p.Run(yaml.MustParse(selectorRenewalPolicy), nodes, nil)
	require.NoError(t, err, "%v", results)
	var out []string
	for _, r := range results {
		if r.ResourceRef == nil || r.ResourceRef.Kind != "Certificate" {
			continue
		}
		head, _, _ := strings.Cut(r.Message, ";")
		out = append(out, fmt.Sprintf("%s %s %s/%s: %s", r.Severity, r.ResourceRef.Kind, r.ResourceRef.Namespace, r.ResourceRef.Name, head))
	}
	return out
}
