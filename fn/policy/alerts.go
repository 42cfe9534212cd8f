package policy

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// defaultAlertsName is the PrometheusRule's name when spec.alerts.name is
// unset.
const defaultAlertsName = "rotate-certs-expiry"

// Alerts asks for a monitoring.coreos.com/v1 PrometheusRule with one alert
// per certificate the policy trusts or watches, firing at NotAfter minus
// spec.expiry.warnWithin (warning) and minus failWithin (critical). The
// rule compares time() with constants, so it fires on the cluster even if
// no pipeline ever renders again.
type Alerts struct {
	// Namespace of the PrometheusRule (where the Prometheus Operator looks
	// for rules, e.g. monitoring).
	Namespace string `json:"namespace"`
	// Name of the PrometheusRule; default rotate-certs-expiry.
	Name string `json:"name,omitempty"`
	// Labels are set on the PrometheusRule's metadata, for the operator's
	// ruleSelector (kube-prometheus-stack selects release: <name>).
	Labels map[string]string `json:"labels,omitempty"`
}

// setDefaults fills the unset name. A nil Alerts stays nil.
func (a *Alerts) setDefaults() {
	if a != nil && a.Name == "" {
		a.Name = defaultAlertsName
	}
}

// validate checks the alerts section at path; nil is valid (no alerts).
func (a *Alerts) validate(path string) FieldErrors {
	var errs FieldErrors
	if a == nil {
		return nil
	}
	switch {
	case a.Namespace == "":
		errs.add(path+".namespace", "required: the namespace the Prometheus Operator reads rules from")
	case !kube.ValidDNSLabel(a.Namespace):
		errs.add(path+".namespace", "%s must be a lowercase DNS label (a-z, 0-9, '-'; at most 63 characters)", kube.Quote(a.Namespace))
	}
	if !kube.ValidObjectName(a.Name) {
		errs.add(path+".name", "%s must be a lowercase DNS name (a-z, 0-9, '-', '.')", kube.Quote(a.Name))
	}
	for k := range a.Labels {
		if k == "" || len(k) > 316 {
			errs.add(fmt.Sprintf("%s.labels[%s]", path, kube.Safe(k)), "invalid label key")
		}
	}
	return errs
}
