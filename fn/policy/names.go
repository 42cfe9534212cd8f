package policy

import "github.com/rotate-certs/rotate-certs/fn/kube"

// The names a policy gives are the names of Kubernetes objects, and the
// function writes objects under them: they are checked as the API server
// checks them (kube.ValidObjectName, ...).

// checkObjectName adds an error at field when name, which must be set, is
// not a valid name for an object of kind. It reports whether name is
// valid.
func (es *FieldErrors) checkObjectName(field, kind, name string) bool {
	switch {
	case name == "":
		es.add(field, "required")
	case !kube.ValidObjectName(name):
		es.add(field, "%s is not a valid %s name: a lowercase DNS subdomain (a-z, 0-9, '-', '.'; at most 253 characters)", kube.Quote(name), kind)
	default:
		return true
	}
	return false
}

// checkNamespace adds an error at field when ns is set and not a valid
// namespace name. It reports whether ns is empty or valid.
func (es *FieldErrors) checkNamespace(field, ns string) bool {
	if ns == "" || kube.ValidDNSLabel(ns) {
		return true
	}
	es.add(field, "%s is not a valid namespace: a lowercase DNS label (a-z, 0-9, '-'; at most 63 characters)", kube.Quote(ns))
	return false
}

// checkDataKey adds an error at field when key is not a valid Secret or
// ConfigMap key. It reports whether key is valid.
func (es *FieldErrors) checkDataKey(field, key string) bool {
	if kube.ValidDataKey(key) {
		return true
	}
	es.add(field, "%s is not a valid data key (letters, digits, '-', '_', '.'; at most 253 characters)", kube.Quote(key))
	return false
}
