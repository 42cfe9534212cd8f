package restart

import (
	"fmt"
	"slices"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
)

// Namespace is what the injection rules read of a workload's Namespace
// object in the input.
type Namespace struct {
	// Labels and Annotations are the Namespace's.
	Labels, Annotations map[string]string
}

// Injection is whether a workload's pods receive a bundle's trust at
// admission, copied into them by an injector that the pod template in git
// does not show.
type Injection struct {
	// Injected is true when a rule says the pods are injected.
	Injected bool
	// Why names the rule that decided, for results.
	Why string
	// unknown is true when nothing decided and the answer depends on the
	// workload's Namespace, which is not in the input.
	unknown bool
}

// Injected applies a bundle's restart.mesh and restart.injected to a
// workload whose pods are pod and whose Namespace object is ns (nil when
// the input does not hold it). restart.exclude wins over both. A selection
// that reads the Namespace does not match a workload whose Namespace is
// absent.
func Injected(r policy.Restart, pod Pod, ns *Namespace) Injection {
	for i, sel := range r.Exclude {
		if ok, _ := selects(sel, pod, ns); ok {
			return Injection{Why: fmt.Sprintf("restart.exclude[%d] (%s)", i, sel)}
		}
	}
	unknown := false
	if r.Mesh != "" {
		m := meshRule(r.Mesh, pod, ns)
		if m.Injected {
			return m
		}
		unknown = m.unknown
	}
	for i, sel := range r.Injected {
		ok, missing := selects(sel, pod, ns)
		if ok {
			return Injection{Injected: true, Why: fmt.Sprintf("restart.injected[%d] (%s)", i, sel)}
		}
		unknown = unknown || missing
	}
	return Injection{unknown: unknown}
}

// selects reports whether every field sel sets matches; missing is true
// when sel reads the Namespace and the input does not hold it.
func selects(sel policy.Selection, pod Pod, ns *Namespace) (ok, missing bool) {
	if sel.NeedsNamespace() {
		if ns == nil {
			return false, true
		}
		if sel.NamespaceSelector != nil && !sel.NamespaceSelector.Matches(ns.Labels) {
			return false, false
		}
		if !hasPairs(ns.Annotations, sel.NamespaceAnnotations) {
			return false, false
		}
	}
	if sel.PodSelector != nil && !sel.PodSelector.Matches(pod.labels) {
		return false, false
	}
	return hasPairs(pod.annotations, sel.PodAnnotations), false
}

func hasPairs(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// meshRule applies a mesh's own injection rules, after the namespaces and
// pods its webhook is never called for.
func meshRule(mesh string, pod Pod, ns *Namespace) Injection {
	if pod.hostNetwork {
		return Injection{} // neither mesh injects a pod on the host network
	}
	if mesh == policy.MeshLinkerd {
		if linkerdWebhookSkips(pod, ns) {
			return Injection{}
		}
		return linkerdRule(pod, ns)
	}
	if slices.Contains(istioIgnored, pod.Namespace) {
		return Injection{}
	}
	return istioRule(pod, ns)
}

// meshWhy returns the formatter of the rule that decided, naming the
// preset.
func meshWhy(mesh string) func(format string, args ...any) string {
	return func(format string, args ...any) string {
		return fmt.Sprintf(format, args...) + " (restart.mesh: " + mesh + ")"
	}
}

// Linkerd's proxy injector (linkerd2 pkg/inject, Report.disableByAnnotation
// and Injectable).
const (
	linkerdInject   = "linkerd.io/inject"
	linkerdEnabled  = "enabled"
	linkerdIngress  = "ingress"
	linkerdDisabled = "disabled"
)

// linkerdRule: the pod template's linkerd.io/inject annotation (enabled or
// ingress) injects; in a Namespace annotated enabled or ingress every pod
// is injected unless its template says disabled. A value other than these
// three, on either, disables injection. automountServiceAccountToken:
// false does not: since stable-2.12 the proxy authenticates with its own
// projected token, and the injector's report reads the field only when
// identity.serviceAccountTokenProjection is off (it is on by default).
func linkerdRule(pod Pod, ns *Namespace) Injection {
	why := meshWhy(policy.MeshLinkerd)
	podValue, podSet := pod.annotations[linkerdInject]
	if podSet && !validLinkerd(podValue) {
		return Injection{}
	}
	podOn := podValue == linkerdEnabled || podValue == linkerdIngress
	if ns == nil {
		switch {
		case podOn:
			return Injection{Injected: true, Why: why("pod template annotation %s: %s", linkerdInject, kube.Safe(podValue))}
		case podValue == linkerdDisabled:
			return Injection{}
		}
		return Injection{unknown: true}
	}
	nsValue, nsSet := ns.Annotations[linkerdInject]
	if nsSet && !validLinkerd(nsValue) {
		return Injection{}
	}
	switch {
	case (nsValue == linkerdEnabled || nsValue == linkerdIngress) && podValue != linkerdDisabled:
		return Injection{Injected: true, Why: why("Namespace annotation %s: %s", linkerdInject, nsValue)}
	case podOn:
		return Injection{Injected: true, Why: why("pod template annotation %s: %s", linkerdInject, podValue)}
	}
	return Injection{}
}

// The default selectors of the proxy injector's webhook (the
// linkerd-control-plane chart's proxyInjector.namespaceSelector and
// objectSelector, since stable-2.12): the API server never calls it for a
// pod of these namespaces, of a Namespace labelled
// config.linkerd.io/admission-webhooks: disabled, or with these labels.
var (
	linkerdSkippedNamespaces = []string{"kube-system", "cert-manager"}
	linkerdSkippedPodLabels  = []string{"linkerd.io/control-plane-component", "linkerd.io/cni-resource"}
)

// linkerdWebhookSkips reports whether the proxy injector's webhook is
// never called for the pod.
func linkerdWebhookSkips(pod Pod, ns *Namespace) bool {
	if slices.Contains(linkerdSkippedNamespaces, pod.Namespace) {
		return true
	}
	if ns != nil && ns.Labels["config.linkerd.io/admission-webhooks"] == "disabled" {
		return true
	}
	return slices.ContainsFunc(linkerdSkippedPodLabels, func(l string) bool {
		_, ok := pod.labels[l]
		return ok
	})
}

func validLinkerd(v string) bool {
	return v == "" || v == linkerdEnabled || v == linkerdDisabled || v == linkerdIngress
}

// istioIgnored are the namespaces Istio's injector never injects
// (pkg/kube/inject IgnoredNamespaces).
var istioIgnored = []string{"kube-system", "kube-public", "kube-node-lease", "local-path-storage"}

// Istio's sidecar injector: its webhooks' namespace and object selectors
// (istio-discovery chart, mutatingwebhook.yaml) and injectRequired
// (pkg/kube/inject).
const (
	istioInjection = "istio-injection"
	istioRev       = "istio.io/rev"
	istioSidecar   = "sidecar.istio.io/inject"
)

// istioRule: a Namespace labelled istio-injection: enabled, or with any
// istio.io/rev label and no istio-injection label, injects its pods; any
// other istio-injection value (disabled) injects none. In a Namespace with
// neither label, a pod template labelled (or annotated)
// sidecar.istio.io/inject: "true", or labelled istio.io/rev, is injected.
// The pod's own sidecar.istio.io/inject - the label when present, else the
// annotation - opts out with "false" alone: since 1.27 the injector
// (injectRequired) reads any other value as unset and falls back to the
// Namespace's choice; before, it opted out with anything but y, yes, true
// or on, so on an older Istio such a pod is rolled needlessly.
func istioRule(pod Pod, ns *Namespace) Injection {
	why := meshWhy(policy.MeshIstio)
	where, value := "label", ""
	if v, ok := pod.labels[istioSidecar]; ok {
		value = v
	} else if v, ok := pod.annotations[istioSidecar]; ok {
		where, value = "annotation", v
	}
	if value == "false" {
		return Injection{}
	}
	optIn := value == "true"
	_, podRev := pod.labels[istioRev]
	podWhy := func() string {
		if optIn {
			return why("pod template %s %s: %s", where, istioSidecar, kube.Quote(value))
		}
		return why("pod template label %s", istioRev)
	}
	if ns == nil {
		if optIn || podRev {
			return Injection{Injected: true, Why: podWhy()}
		}
		return Injection{unknown: true}
	}
	if v, ok := ns.Labels[istioInjection]; ok {
		if v == "enabled" {
			return Injection{Injected: true, Why: why("Namespace label %s: enabled", istioInjection)}
		}
		return Injection{} // disabled, or a value no webhook selects
	}
	if _, ok := ns.Labels[istioRev]; ok {
		return Injection{Injected: true, Why: why("Namespace label %s", istioRev)}
	}
	if optIn || podRev {
		return Injection{Injected: true, Why: podWhy()}
	}
	return Injection{}
}
