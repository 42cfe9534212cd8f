// Package policy is the RotationPolicy API (rotate-certs.dev/v1alpha1): its
// types, strict decoding with field paths, defaults and validation. It is the
// only place that knows the policy's YAML shape; the rest of rotate-certs
// works on the decoded, defaulted values.
package policy

import (
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// APIVersion and Kind identify a RotationPolicy.
const (
	APIVersion = "rotate-certs.dev/v1alpha1"
	Kind       = "RotationPolicy"
)

// Modes of a trust bundle.
const (
	// ModeBundle keeps previous CAs during the overlap window.
	ModeBundle = "Bundle"
	// ModeCopy writes exactly the current CAs: the rollback path.
	ModeCopy = "Copy"
)

// Defaults used by Default.
const (
	DefaultWarnWithin  = 720 * time.Hour
	DefaultFailWithin  = 168 * time.Hour
	defaultMaxPrevious = 1
	// MaxPreviousLimit caps retain.maxPrevious so that a bundle cannot grow
	// without bound.
	MaxPreviousLimit = 16
	// defaultSecretKey is the default data key of Secret sources and targets.
	defaultSecretKey = "ca.crt"
	// defaultConfigMapKey is the default data key of ConfigMap sources and
	// targets.
	defaultConfigMapKey = "ca-bundle.crt"
)

// RotationPolicy is the function config of rotate-certs.
type RotationPolicy struct {
	// APIVersion must be APIVersion.
	APIVersion string `json:"apiVersion"`
	// Kind must be Kind.
	Kind string `json:"kind"`
	// Metadata is the object metadata; only name is read, the rest is
	// passed through untouched (kpt and kustomize add annotations).
	Metadata map[string]any `json:"metadata,omitempty"`
	// Spec is the policy.
	Spec Spec `json:"spec"`
}

// Spec is the body of a RotationPolicy.
type Spec struct {
	// Now is an RFC 3339 time used instead of the wall clock, for
	// reproducible renders and tests.
	Now string `json:"now,omitempty"`
	// Expiry sets the thresholds of the expiry report.
	Expiry Expiry `json:"expiry,omitempty"`
	// TrustBundles are the bundles to render.
	TrustBundles []TrustBundle `json:"trustBundles,omitempty"`
	ClusterAPI   *ClusterAPI   `json:"clusterAPI,omitempty"`
	Alerts       *Alerts       `json:"alerts,omitempty"` // PrometheusRule before expiry (alerts.go)
}

// Expiry holds the report thresholds.
type Expiry struct {
	// WarnWithin: a certificate expiring within this gets a warning result.
	WarnWithin *Duration `json:"warnWithin,omitempty"`
	// FailWithin: the critical threshold used by alerts and `check`.
	FailWithin *Duration `json:"failWithin,omitempty"`
}

// TrustBundle describes one bundle: where its certificates come from and
// where the bundle is written.
type TrustBundle struct {
	// Name identifies the bundle in results and annotations; unique.
	Name string `json:"name"`
	// Mode is ModeBundle (default) or ModeCopy.
	Mode string `json:"mode,omitempty"`
	// Domain names the trust domain the bundle belongs to: every bundle of
	// the same domain in the repository trusts the CAs current in any of
	// their sources, and a previous CA leaves none of them while a
	// certificate of any of their packages still needs it (a multicluster
	// mesh's anchor, a corporate root). Empty: the bundle stands alone.
	Domain string `json:"domain,omitempty"`
	// Sources are what must be trusted now, in order.
	Sources []Source `json:"sources"`
	// Target is where the bundle is written.
	Target Target `json:"target"`
	// Retain controls how previous CAs are carried over.
	Retain Retain `json:"retain,omitempty"`
	// Restart controls which workloads roll when the bundle changes.
	Restart Restart `json:"restart,omitempty"`
	// Inject lists the objects whose caBundle fields the API server reads
	// (webhook configurations, APIServices, CRD conversion webhooks) to
	// write the bundle into (inject.go).
	Inject []Inject `json:"inject,omitempty"`
}

// Source is exactly one of Secret, ConfigMap or Inline.
type Source struct {
	// Secret reads a key of a Secret in the input.
	Secret *ObjectKeyRef `json:"secret,omitempty"`
	// ConfigMap reads a key of a ConfigMap in the input.
	ConfigMap *ObjectKeyRef `json:"configMap,omitempty"`
	// Inline is PEM text in the policy itself.
	Inline string `json:"inline,omitempty"`
}

// ObjectKeyRef points at one data key of an object in the input.
type ObjectKeyRef struct {
	// Name of the object.
	Name string `json:"name"`
	// Namespace of the object; empty matches an object written without a
	// namespace.
	Namespace string `json:"namespace,omitempty"`
	// Key in data/stringData/binaryData; defaults to ca.crt for Secrets and
	// ca-bundle.crt for ConfigMaps.
	Key string `json:"key,omitempty"`
	// Optional: a missing or empty source is skipped with an info result
	// instead of failing the render.
	Optional bool `json:"optional,omitempty"`
}

// Target is the object the bundle is written to: a Secret or ConfigMap
// once per namespace, or one cluster-scoped ClusterTrustBundle or
// trust-manager Bundle (kinds.go). A bundle that only injects may have
// none (IsZero).
type Target struct {
	// Kind is one of the target-kind table (kube.TargetKinds): Secret
	// (default), ConfigMap, ClusterTrustBundle or Bundle.
	Kind kube.TargetKind `json:"kind,omitempty"`
	// Name of the target object.
	Name string `json:"name"`
	// Namespaces to write the target in; default (absent): the first
	// source's. An empty list (namespaces: []) with a NamespaceSelector
	// writes the target only in the selected namespaces.
	Namespaces []string `json:"namespaces,omitempty"`
	// NamespaceSelector adds every input Namespace whose labels match.
	NamespaceSelector *kube.Selector `json:"namespaceSelector,omitempty"`
	// Key is the data key; default ca.crt (Secret) or ca-bundle.crt
	// (ConfigMap).
	Key string `json:"key,omitempty"`
	// Metadata sets static labels and annotations on every target object
	// (metadata.go).
	Metadata *TargetMetadata `json:"metadata,omitempty"`
	// AdditionalFormats adds binary truststores next to Key (formats.go).
	AdditionalFormats *AdditionalFormats `json:"additionalFormats,omitempty"`
	// SignerName sets a ClusterTrustBundle's spec.signerName; its name
	// must then start with the signer name, '/' replaced by ':', and ':'.
	SignerName string `json:"signerName,omitempty"`
	// TrustNamespace is the namespace where trust-manager reads a Bundle's
	// Secret and ConfigMap sources; default cert-manager.
	TrustNamespace string `json:"trustNamespace,omitempty"`
}

// Retain controls the previous CAs carried over from the existing target.
type Retain struct {
	// MaxPrevious is how many previous CAs are kept (default 1, 0 = none).
	MaxPrevious *int `json:"maxPrevious,omitempty"`
	// For drops a previous CA this long after it was retired (stopped
	// being current; see the target's rotate-certs.dev/retired record).
	For *Duration `json:"for,omitempty"`
	// ProtectIssuers keeps a previous CA that a valid certificate of the
	// input still chains to - a leaf, or an issuer or intermediate it
	// signed (default true).
	ProtectIssuers *bool `json:"protectIssuers,omitempty"`
	// DropUnusedAfter drops a previous CA that nothing in the input chains
	// to once it has been retired this long: the minimum overlap for peers
	// whose certificates are not in git. Unset: no such drop.
	DropUnusedAfter *Duration `json:"dropUnusedAfter,omitempty"`
}
