package policy

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// ownedPrefix is the annotation prefix of the annotations rotate-certs
// writes (bundle-hash, rotated-at, retired, previous, ...): a policy may not
// set one of its own.
const ownedPrefix = "rotate-certs.dev/"

// TargetMetadata are static labels and annotations set on every target
// object of a bundle, created or existing: what a controller selecting the
// trust objects needs (a Reloader match label, an Argo CD sync option).
// Other labels and annotations of an existing target are kept.
type TargetMetadata struct {
	// Labels are set on every target object.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are set on every target object; none may use the
	// rotate-certs.dev/ prefix.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// reservedAnnotationPrefixes are the annotation prefixes a target's
// metadata may not set, with why: the function's own, and the ones that
// tell kpt and kustomize where an object lives or whether to apply it
// (config.kubernetes.io/local-config: "true" on a target would keep it from
// ever reaching the cluster).
var reservedAnnotationPrefixes = []struct{ prefix, why string }{
	{ownedPrefix, "rotate-certs writes the annotations under this prefix itself"},
	{"config.kubernetes.io/", "kpt and kustomize read it to place or skip the object"},
	{"internal.config.kubernetes.io/", "kpt and kustomize read it to place or skip the object"},
	{"kustomize.config.k8s.io/", "kustomize reads it to identify the object"},
}

// Limits of Kubernetes object metadata (apimachinery's validation).
const (
	maxLabelValue       = 63
	maxNamePart         = 63
	maxPrefix           = 253
	maxAnnotationsBytes = 256 * 1024
)

var qualifiedNamePart = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)

// checkQualifiedName returns why key is not a Kubernetes label or
// annotation key ("" when it is one): an optional DNS subdomain prefix and
// "/", then a name of at most 63 characters that starts and ends with a
// letter or digit and holds only those, '-', '_' and '.'.
func checkQualifiedName(key string) string {
	name := key
	if prefix, rest, found := strings.Cut(key, "/"); found {
		switch {
		case prefix == "":
			return "the prefix before '/' must not be empty"
		case len(prefix) > maxPrefix || !kube.ValidObjectName(prefix):
			return fmt.Sprintf("the prefix %s must be a lowercase DNS subdomain of at most %d characters", kube.Quote(prefix), maxPrefix)
		}
		name = rest
	}
	switch {
	case name == "":
		return "the name part must not be empty"
	case len(name) > maxNamePart:
		return fmt.Sprintf("the name part %s is longer than %d characters", kube.Quote(name), maxNamePart)
	case !qualifiedNamePart.MatchString(name):
		return fmt.Sprintf("the name part %s must start and end with a letter or digit and hold only letters, digits, '-', '_' and '.'", kube.Quote(name))
	}
	return ""
}

// validate checks the labels and annotations of a target's metadata (at
// path ".target.metadata"). It is safe on a nil receiver.
func (m *TargetMetadata) validate(path string) FieldErrors {
	if m == nil {
		return nil
	}
	var errs FieldErrors
	for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
		f := fmt.Sprintf("%s.labels[%s]", path, kube.Safe(k))
		if why := checkQualifiedName(k); why != "" {
			errs.add(f, "%s is not a valid label key: %s", kube.Quote(k), why)
		}
		if v := m.Labels[k]; len(v) > maxLabelValue || (v != "" && !qualifiedNamePart.MatchString(v)) {
			errs.add(f, "%s is not a valid label value: at most %d characters, empty or starting and ending with a letter or digit, with only letters, digits, '-', '_' and '.' between", kube.Quote(v), maxLabelValue)
		}
	}
	size := 0
	for _, k := range slices.Sorted(maps.Keys(m.Annotations)) {
		f := fmt.Sprintf("%s.annotations[%s]", path, kube.Safe(k))
		size += len(k) + len(m.Annotations[k])
		if why := checkQualifiedName(k); why != "" {
			errs.add(f, "%s is not a valid annotation key: %s", kube.Quote(k), why)
			continue
		}
		for _, r := range reservedAnnotationPrefixes {
			if strings.HasPrefix(k, r.prefix) {
				errs.add(f, "%s uses the reserved prefix %s: %s", kube.Quote(k), r.prefix, r.why)
			}
		}
	}
	if size > maxAnnotationsBytes {
		errs.add(path+".annotations", "%d bytes of annotations, more than the %d bytes (256 KiB) the API server accepts on an object", size, maxAnnotationsBytes)
	}
	return errs
}
