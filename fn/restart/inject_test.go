package restart

import (
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ruleCase is one workload a mesh preset decides on.
type ruleCase struct {
	name   string
	pod    Pod
	ns     *Namespace
	want   bool
	unsure bool
}

// checkRules runs the cases under restart r; an injected workload's
// reason must name each of why.
func checkRules(t *testing.T, r policy.Restart, cases []ruleCase, why ...string) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Injected(r, tc.pod, tc.ns)
			assert.Equal(t, tc.want, got.Injected, got.Why)
			assert.Equal(t, tc.unsure, got.unknown)
			for _, w := range why {
				if got.Injected {
					assert.Contains(t, got.Why, w)
				}
			}
		})
	}
}

func ns(labels, annotations map[string]string) *Namespace {
	return &Namespace{Labels: labels, Annotations: annotations}
}

type m = map[string]string

// The Linkerd preset follows the proxy injector's truth table (linkerd2
// pkg/inject Report.disableByAnnotation): the pod's annotation wins over
// the namespace's only to disable, an invalid value on either disables,
// and pods on the host network or without a service account token are
// never injected.
func TestLinkerdRule(t *testing.T) {
	checkRules(t, policy.Restart{Mesh: policy.MeshLinkerd}, []ruleCase{
		{"namespace enabled", Pod{}, ns(nil, m{"linkerd.io/inject": "enabled"}), true, false},
		{"namespace ingress", Pod{}, ns(nil, m{"linkerd.io/inject": "ingress"}), true, false},
		{"namespace enabled, pod disabled (opt-out)", Pod{annotations: m{"linkerd.io/inject": "disabled"}}, ns(nil, m{"linkerd.io/inject": "enabled"}), false, false},
		{"namespace disabled, pod enabled", Pod{annotations: m{"linkerd.io/inject": "enabled"}}, ns(nil, m{"linkerd.io/inject": "disabled"}), true, false},
		{"namespace unannotated, pod enabled", Pod{annotations: m{"linkerd.io/inject": "enabled"}}, ns(nil, nil), true, false},
		{"nothing", Pod{}, ns(nil, nil), false, false},
		{"namespace label is not read", Pod{}, ns(m{"linkerd.io/inject": "enabled"}, nil), false, false},
		{"invalid pod value", Pod{annotations: m{"linkerd.io/inject": "true"}}, ns(nil, m{"linkerd.io/inject": "enabled"}), false, false},
		{"invalid namespace value", Pod{annotations: m{"linkerd.io/inject": "enabled"}}, ns(nil, m{"linkerd.io/inject": "yes"}), false, false},
		{"host network", Pod{hostNetwork: true}, ns(nil, m{"linkerd.io/inject": "enabled"}), false, false},
		{"namespace absent, pod enabled", Pod{annotations: m{"linkerd.io/inject": "enabled"}}, nil, true, false},
		{"namespace absent, pod disabled", Pod{annotations: m{"linkerd.io/inject": "disabled"}}, nil, false, false},
		{"namespace absent, pod silent", Pod{}, nil, false, true},
		{"kube-system (webhook namespaceSelector)", Pod{Namespace: "kube-system", annotations: m{"linkerd.io/inject": "enabled"}}, nil, false, false},
		{"cert-manager (webhook namespaceSelector)", Pod{Namespace: "cert-manager"}, ns(nil, m{"linkerd.io/inject": "enabled"}), false, false},
		{"namespace admission-webhooks disabled", Pod{annotations: m{"linkerd.io/inject": "enabled"}}, ns(m{"config.linkerd.io/admission-webhooks": "disabled"}, nil), false, false},
		{"control plane pod (webhook objectSelector)", Pod{labels: m{"linkerd.io/control-plane-component": "destination"}}, ns(nil, m{"linkerd.io/inject": "enabled"}), false, false},
		{"linkerd-cni pod (webhook objectSelector)", Pod{labels: m{"linkerd.io/cni-resource": "true"}, annotations: m{"linkerd.io/inject": "enabled"}}, nil, false, false},
	}, "linkerd.io/inject", "restart.mesh: linkerd")
}

// automountServiceAccountToken: false does not keep Linkerd's proxy out:
// since stable-2.12 the proxy authenticates with its own projected token
// (linkerd-identity-token; identity.serviceAccountTokenProjection, true by
// default), and the injector's report counts the pod's field only when
// that is off. Read from YAML, as the restart rules read a workload.
func TestLinkerdInjectsWithoutServiceAccountToken(t *testing.T) {
	for _, no := range []string{"false", "False", "no"} {
		w, err := readNode(mustParse(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  template:
    spec:
      automountServiceAccountToken: `+no+`
      containers: [{name: c}]
`))
		require.NoError(t, err)
		got := Injected(policy.Restart{Mesh: policy.MeshLinkerd}, w.pod, ns(nil, m{"linkerd.io/inject": "enabled"}))
		assert.True(t, got.Injected, "automountServiceAccountToken: %s", no)
	}
}

// The Istio preset follows the sidecar injector's webhooks (namespace and
// object selectors of the istio-discovery chart) and injectRequired: the
// namespace's istio-injection label decides when present, else any
// istio.io/rev label; the pod's sidecar.istio.io/inject label (else
// annotation) opts in or out, the label winning over the annotation.
func TestIstioRule(t *testing.T) {
	enabled := ns(m{"istio-injection": "enabled"}, nil)
	checkRules(t, policy.Restart{Mesh: policy.MeshIstio}, []ruleCase{
		{"namespace enabled", Pod{}, enabled, true, false},
		{"namespace revision", Pod{}, ns(m{"istio.io/rev": "1-24"}, nil), true, false},
		{"namespace disabled", Pod{}, ns(m{"istio-injection": "disabled"}, nil), false, false},
		{"namespace disabled wins over pod opt-in", Pod{labels: m{"sidecar.istio.io/inject": "true"}}, ns(m{"istio-injection": "disabled"}, nil), false, false},
		{"istio-injection wins over revision", Pod{}, ns(m{"istio-injection": "disabled", "istio.io/rev": "canary"}, nil), false, false},
		{"pod label false (opt-out)", Pod{labels: m{"sidecar.istio.io/inject": "false"}}, enabled, false, false},
		{"pod annotation false (opt-out)", Pod{annotations: m{"sidecar.istio.io/inject": "false"}}, enabled, false, false},
		{"pod label disabled falls back to the namespace", Pod{labels: m{"sidecar.istio.io/inject": "disabled"}}, enabled, true, false},
		{"pod label False falls back to the namespace", Pod{labels: m{"sidecar.istio.io/inject": "False"}}, enabled, true, false},
		{"pod annotation no falls back to the namespace", Pod{annotations: m{"sidecar.istio.io/inject": "no"}}, ns(m{"istio.io/rev": "1-27"}, nil), true, false},
		{"pod label off, namespace absent", Pod{labels: m{"sidecar.istio.io/inject": "off"}}, nil, false, true},
		{"pod label disabled in a plain namespace", Pod{labels: m{"sidecar.istio.io/inject": "disabled"}}, ns(nil, nil), false, false},
		{"label wins over annotation", Pod{labels: m{"sidecar.istio.io/inject": "true"}, annotations: m{"sidecar.istio.io/inject": "false"}}, enabled, true, false},
		{"pod label true in a plain namespace", Pod{labels: m{"sidecar.istio.io/inject": "true"}}, ns(nil, nil), true, false},
		{"pod annotation true in a plain namespace", Pod{annotations: m{"sidecar.istio.io/inject": "true"}}, ns(nil, nil), true, false},
		{"pod revision label", Pod{labels: m{"istio.io/rev": "canary"}}, ns(nil, nil), true, false},
		{"pod label yes in a plain namespace", Pod{labels: m{"sidecar.istio.io/inject": "yes"}}, ns(nil, nil), false, false},
		{"nothing", Pod{}, ns(nil, nil), false, false},
		{"host network", Pod{hostNetwork: true}, enabled, false, false},
		{"namespace absent, pod opt-in", Pod{labels: m{"sidecar.istio.io/inject": "true"}}, nil, true, false},
		{"namespace absent, pod opt-out", Pod{labels: m{"sidecar.istio.io/inject": "false"}}, nil, false, false},
		{"namespace absent, pod silent", Pod{}, nil, false, true},
		{"kube-system (ignored namespace)", Pod{Namespace: "kube-system"}, ns(m{"istio-injection": "enabled"}, nil), false, false},
		{"kube-node-lease, namespace absent", Pod{Namespace: "kube-node-lease", labels: m{"sidecar.istio.io/inject": "true"}}, nil, false, false},
	}, "restart.mesh: istio")
}

// Every form of a selection, alone and together; exclude wins over both
// the selections and the mesh.
func TestInjectedSelections(t *testing.T) {
	team := &kube.Selector{MatchLabels: m{"team": "payments"}}
	agent := m{"vault.hashicorp.com/agent-inject": "true"}
	pod := Pod{labels: m{"app": "api", "tier": "web"}, annotations: agent}
	payments := ns(m{"team": "payments"}, m{"example.com/ca-injection": "on"})
	other := ns(m{"team": "search"}, nil)
	for _, tc := range []struct {
		name string
		sel  policy.Selection
		ns   *Namespace
		want bool
	}{
		{"namespaceSelector", policy.Selection{NamespaceSelector: team}, payments, true},
		{"namespaceSelector, other namespace", policy.Selection{NamespaceSelector: team}, other, false},
		{"namespaceAnnotations", policy.Selection{NamespaceAnnotations: m{"example.com/ca-injection": "on"}}, payments, true},
		{"namespaceAnnotations, other value", policy.Selection{NamespaceAnnotations: m{"example.com/ca-injection": "off"}}, payments, false},
		{"podSelector", policy.Selection{PodSelector: &kube.Selector{MatchExpressions: []kube.Requirement{{Key: "tier", Operator: "In", Values: []string{"web"}}}}}, other, true},
		{"podSelector miss", policy.Selection{PodSelector: &kube.Selector{MatchLabels: m{"app": "db"}}}, other, false},
		{"podAnnotations", policy.Selection{PodAnnotations: agent}, other, true},
		{"podAnnotations, other value", policy.Selection{PodAnnotations: m{"vault.hashicorp.com/agent-inject": "false"}}, other, false},
		{"all fields must match", policy.Selection{NamespaceSelector: team, PodAnnotations: agent}, other, false},
		{"all fields match", policy.Selection{NamespaceSelector: team, PodAnnotations: agent}, payments, true},
		{"namespace absent", policy.Selection{NamespaceSelector: team}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Injected(policy.Restart{Injected: []policy.Selection{tc.sel}}, pod, tc.ns)
			assert.Equal(t, tc.want, got.Injected)
			if got.Injected {
				assert.Contains(t, got.Why, "restart.injected[0]")
			}
			assert.Equal(t, tc.ns == nil, got.unknown, "a selection that reads an absent Namespace cannot tell")
		})
	}

	excl := policy.Restart{Mesh: policy.MeshLinkerd, Injected: []policy.Selection{{PodAnnotations: agent}},
		Exclude: []policy.Selection{{PodSelector: &kube.Selector{MatchLabels: m{"app": "api"}}}}}
	got := Injected(excl, pod, ns(nil, m{"linkerd.io/inject": "enabled"}))
	assert.False(t, got.Injected, "exclude wins over the mesh and the selections")
	assert.Contains(t, got.Why, "restart.exclude[0]")
	got = Injected(excl, Pod{labels: m{"app": "web"}, annotations: agent}, ns(nil, nil))
	assert.True(t, got.Injected, "a workload exclude does not select stays injected")
}
