package clusterapi

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func parse(t *testing.T, s string) []*yaml.RNode {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(s), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return items
}

func render(t *testing.T, items []*yaml.RNode) string {
	t.Helper()
	var buf bytes.Buffer
	if err := (kio.ByteWriter{Writer: &buf}).Write(items); err != nil {
		t.Fatalf("render: %v", err)
	}
	return buf.String()
}

func cfg(days int) policy.ClusterAPI {
	return policy.ClusterAPI{CertificatesExpiryDays: days, Kinds: append([]string(nil), policy.ClusterAPIKinds...)}
}

// run applies c to the YAML in and returns the rendered input items, the
// added items and the results.
func run(t *testing.T, in string, c policy.ClusterAPI) (out, added string, results framework.Results) {
	t.Helper()
	items := parse(t, in)
	add, res := Apply(items, c, now)
	if len(add) > 0 {
		added = render(t, add)
	}
	return render(t, items), added, res
}

func errorsOf(results framework.Results) []string {
	var out []string
	for _, r := range results {
		if r.Severity == framework.Error {
			out = append(out, resultLine(r))
		}
	}
	return out
}

func resultLine(r *framework.Result) string {
	s := ""
	if r.ResourceRef != nil {
		s = r.ResourceRef.Kind + " " + r.ResourceRef.Namespace + "/" + r.ResourceRef.Name
	}
	if r.Field != nil {
		s += " " + r.Field.Path
	}
	return s + ": " + r.Message
}

func hasResult(results framework.Results, sev framework.Severity, substrings ...string) bool {
	for _, r := range results {
		if r.Severity != sev {
			continue
		}
		line := resultLine(r)
		all := true
		for _, s := range substrings {
			all = all && strings.Contains(line, s)
		}
		if all {
			return true
		}
	}
	return false
}

const kcpV1beta1 = `apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: prod-control-plane
  namespace: default
  labels:
    cluster.x-k8s.io/cluster-name: prod
spec:
  replicas: 3
  version: v1.33.1
`

const kcpV1beta2 = `apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata:
  name: prod-control-plane
  namespace: default
  labels:
    cluster.x-k8s.io/cluster-name: prod
spec:
  replicas: 3 # odd, stacked etcd
  rollout:
    before:
      certificatesExpiryDays: 21 # set by hand last year
    strategy:
      type: RollingUpdate
  version: v1.34.0
`

const kcptV1beta1 = `apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlaneTemplate
metadata:
  name: quick-start-control-plane
  namespace: default
spec:
  template:
    spec:
      kubeadmConfigSpec:
        clusterConfiguration:
          certificateValidityPeriodDays: 180
`

const kcptV1beta2 = `apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlaneTemplate
metadata:
  name: quick-start-control-plane
  namespace: default
spec:
  template:
    spec:
      rollout:
        before: {}
`

func TestKubeadmControlPlaneKindsAndVersions(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // a fragment of the output
		field    string
	}{
		{"KCP v1beta1", kcpV1beta1, "spec:\n  replicas: 3\n  version: v1.33.1\n  rolloutBefore:\n    certificatesExpiryDays: 30\n", "spec.rolloutBefore.certificatesExpiryDays"},
		{"KCP v1beta2", kcpV1beta2, "  rollout:\n    before:\n      certificatesExpiryDays: 30 # set by hand last year\n", "spec.rollout.before.certificatesExpiryDays"},
		{"KCPT v1beta1", kcptV1beta1, "          certificateValidityPeriodDays: 180\n      rolloutBefore:\n        certificatesExpiryDays: 30\n", "spec.template.spec.rolloutBefore.certificatesExpiryDays"},
		{"KCPT v1beta2", kcptV1beta2, "      rollout:\n        before: {certificatesExpiryDays: 30}\n", "spec.template.spec.rollout.before.certificatesExpiryDays"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, added, results := run(t, tt.in, cfg(30))
			if errs := errorsOf(results); len(errs) > 0 {
				t.Fatalf("unexpected errors: %v", errs)
			}
			if added != "" {
				t.Errorf("nothing must be added, got:\n%s", added)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
			if !hasResult(results, framework.Info, tt.field, "set certificatesExpiryDays to 30") {
				t.Errorf("no info result for %s: %v", tt.field, results)
			}
			isTemplate := strings.HasPrefix(tt.name, "KCPT")
			if hasResult(results, framework.Warning, "is immutable") != isTemplate {
				t.Errorf("a template change (and only that) must warn that spec.template.spec is immutable: %v", results)
			}
			// Idempotent: a second pass changes nothing.
			again, _, results2 := run(t, out, cfg(30))
			if again != out {
				t.Errorf("second pass changed the output:\n%s\nthen\n%s", out, again)
			}
			if !hasResult(results2, framework.Info, tt.field, "already 30") {
				t.Errorf("second pass must report the value as already set: %v", results2)
			}
		})
	}
}

func TestEqualValueIsByteIdentical(t *testing.T) {
	// Odd formatting that a re-encode would normalise must survive.
	in := `apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata: {name: cp, namespace: default}
spec:
  rollout:
    before:
      certificatesExpiryDays:   30   # keep me
    strategy: {type: RollingUpdate}
  machineTemplate:
    spec:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: cp}
`
	items := parse(t, in)
	before := render(t, items)
	_, results := Apply(items, cfg(30), now)
	if after := render(t, items); after != before {
		t.Errorf("equal value changed bytes:\n%s\nthen\n%s", before, after)
	}
	if !hasResult(results, framework.Info, "already 30") {
		t.Errorf("want an already-set info: %v", results)
	}
}

func TestNonIntegerExistingValueIsReplaced(t *testing.T) {
	out, _, results := run(t, strings.Replace(kcpV1beta2, "certificatesExpiryDays: 21", `certificatesExpiryDays: "30"`, 1), cfg(30))
	if errs := errorsOf(results); len(errs) != 1 || !strings.Contains(errs[0], "spec.rollout.before.certificatesExpiryDays: must be a whole number") {
		t.Errorf("a quoted value is not what the CRD accepts; want one error naming the field, got %v", errs)
	}
	if !strings.Contains(out, `certificatesExpiryDays: "30"`) {
		t.Errorf("a failed render must not change the object:\n%s", out)
	}
}

func TestSelectorAndKinds(t *testing.T) {
	in := kcpV1beta1 + "---\n" + strings.Replace(kcpV1beta2, "cluster-name: prod", "cluster-name: dev", 1) + "---\n" + kcptV1beta2
	sel := cfg(30)
	sel.Selector = &kube.Selector{MatchLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "prod"}}
	out, _, results := run(t, in, sel)
	if len(errorsOf(results)) > 0 {
		t.Fatal(errorsOf(results))
	}
	if !strings.Contains(out, "rolloutBefore:\n    certificatesExpiryDays: 30") {
		t.Errorf("prod KCP must be set:\n%s", out)
	}
	if !strings.Contains(out, "certificatesExpiryDays: 21 # set by hand") {
		t.Errorf("dev KCP is not selected and must keep 21:\n%s", out)
	}
	if !strings.Contains(out, "before: {}") {
		t.Errorf("the template has no labels and is not selected:\n%s", out)
	}

	onlyTemplates := cfg(30)
	onlyTemplates.Kinds = []string{policy.KindKubeadmControlPlaneTemplate}
	out, _, _ = run(t, in, onlyTemplates)
	if strings.Contains(out, "rolloutBefore:\n    certificatesExpiryDays") || !strings.Contains(out, "certificatesExpiryDays: 21") {
		t.Errorf("KubeadmControlPlanes are not in kinds and must be untouched:\n%s", out)
	}
	if !strings.Contains(out, "before: {certificatesExpiryDays: 30}") {
		t.Errorf("the template must be set:\n%s", out)
	}
}

func TestIgnoredObjects(t *testing.T) {
	in := `apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata:
  name: local
  annotations:
    config.kubernetes.io/local-config: "true"
spec: {}
---
apiVersion: controlplane.example.com/v1
kind: KubeadmControlPlane
metadata:
  name: other-group
spec: {}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: capi-cluster
spec: {}
`
	out, added, results := run(t, in, cfg(30))
	if out != render(t, parse(t, in)) || added != "" || len(results) != 0 {
		t.Errorf("local config, other groups and CAPI Clusters must pass untouched and silently; results %v:\n%s", results, out)
	}
}

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name, in string
		days     int
		want     string
	}{
		{"at validity", kcptV1beta1, 180, "KubeadmControlPlaneTemplate default/quick-start-control-plane spec.template.spec.rolloutBefore.certificatesExpiryDays: cannot set certificatesExpiryDays: 180 must be less than certificateValidityPeriodDays (180)"},
		{"above validity", kcptV1beta1, 200, "spec.template.spec.rolloutBefore.certificatesExpiryDays: cannot set certificatesExpiryDays: 200 must be less than certificateValidityPeriodDays (180)"},
		{"default validity", kcpV1beta2, 365, "KubeadmControlPlane default/prod-control-plane spec.rollout.before.certificatesExpiryDays: cannot set certificatesExpiryDays: 365 must be less than 365"},
		{"below minimum", kcpV1beta1, 6, "spec.rolloutBefore.certificatesExpiryDays: cannot set certificatesExpiryDays: 6 is below 7"},
		{"malformed validity", strings.Replace(kcptV1beta1, "180", "half-a-year", 1), 30, "spec.template.spec.kubeadmConfigSpec.clusterConfiguration.certificateValidityPeriodDays: must be a whole number"},
		{"unknown apiVersion", strings.Replace(kcpV1beta1, "v1beta1", "v1alpha4", 1), 30, "KubeadmControlPlane default/prod-control-plane apiVersion: unsupported apiVersion controlplane.cluster.x-k8s.io/v1alpha4 of KubeadmControlPlane"},
		{"unknown template apiVersion", strings.Replace(kcptV1beta2, "v1beta2", "v1beta3", 1), 30, "KubeadmControlPlaneTemplate default/quick-start-control-plane apiVersion: unsupported apiVersion"},
		{"rollout not an object", strings.Replace(kcpV1beta2, "  rollout:\n    before:\n      certificatesExpiryDays: 21 # set by hand last year\n    strategy:\n      type: RollingUpdate\n", "  rollout: soon\n", 1), 30, "KubeadmControlPlane default/prod-control-plane spec.rollout: must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A good object next to the bad one proves that nothing is
			// half-applied.
			in := tt.in + "---\n" + strings.Replace(kcpV1beta1, "prod-control-plane", "good", 1)
			items := parse(t, in)
			before := render(t, items)
			added, results := Apply(items, cfg(tt.days), now)
			errs := errorsOf(results)
			if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), tt.want) {
				t.Fatalf("errors %q, want one containing %q", errs, tt.want)
			}
			if added != nil {
				t.Error("a failed render must add nothing")
			}
			if after := render(t, items); after != before {
				t.Errorf("a failed render must change nothing:\n%s", after)
			}
		})
	}
}

func TestSOPSEncryptedIsSkipped(t *testing.T) {
	in := kcpV1beta1 + "sops:\n  mac: ENC[AES256_GCM,data:abc]\n"
	out, _, results := run(t, in, cfg(30))
	if strings.Contains(out, "rolloutBefore") {
		t.Errorf("an encrypted object must not be edited:\n%s", out)
	}
	if !hasResult(results, framework.Warning, "SOPS-encrypted") {
		t.Errorf("want a warning: %v", results)
	}
}
