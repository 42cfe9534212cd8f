package kube

import "regexp"

// Names of Kubernetes objects, as the API server checks them. Every name
// rotate-certs writes (a target, a copied template) must pass: a name such
// as ../../ca names no object and, written into a file path, a file
// outside its place.
var (
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dataKey      = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
)

// ValidObjectName reports whether name is a DNS-1123 subdomain: lowercase
// letters, digits, '-' and '.', at most 253 characters - the name of a
// Secret, a ConfigMap, a workload or a machine template.
func ValidObjectName(name string) bool {
	return len(name) <= 253 && dnsSubdomain.MatchString(name)
}

// ValidDNSLabel reports whether s is a DNS-1123 label: lowercase letters,
// digits and '-', at most 63 characters - the name of a namespace.
func ValidDNSLabel(s string) bool {
	return len(s) <= 63 && dnsLabel.MatchString(s)
}

// ValidDataKey reports whether key is a valid Secret or ConfigMap data
// key: letters, digits, '-', '_' and '.', at most 253 characters, not "."
// or "..".
func ValidDataKey(key string) bool {
	return len(key) <= 253 && dataKey.MatchString(key) && key != "." && key != ".."
}
