package policy

import (
	"encoding/json"
	"errors"
	"reflect"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Decode reads a RotationPolicy from the function config node, strictly:
// another kind, an unknown field, a wrong type or an invalid value is an
// error. The result is defaulted and validated. On failure the error is a
// FieldErrors listing every problem found.
func Decode(node *yaml.RNode) (*RotationPolicy, error) {
	if node == nil || node.IsNilOrEmpty() {
		return nil, FieldErrors{kube.FieldErrorf("", "%w: rotate-certs needs a %s (apiVersion %s)", ErrNoFunctionConfig, Kind, APIVersion)}
	}
	// kyaml's field accessors index mapping content in pairs and panic on
	// a list or scalar: check the shape before asking for kind.
	if k := node.YNode().Kind; k != yaml.MappingNode {
		return nil, FieldErrors{kube.FieldErrorf("", "functionConfig is a YAML %s; rotate-certs needs a %s object (apiVersion %s)", kube.NodeKindName(k), Kind, APIVersion)}
	}
	// The same holds for metadata and its labels and annotations, which
	// every result about the policy reads.
	if err := kube.CheckShape(node, ""); err != nil {
		var ve *kube.FieldError
		if errors.As(err, &ve) {
			return nil, FieldErrors{ve}
		}
		return nil, FieldErrors{{Err: err}}
	}
	// A key defined twice: kyaml keeps the first value and JSON the last,
	// and the policy does not say which was meant.
	if dups := kube.DuplicateKeysOf(node); len(dups) > 0 {
		var errs FieldErrors
		for _, d := range dups {
			errs.add(kube.Safe(d.Field), "mapping key %s is defined twice: which value was meant is unknown", kube.Quote(d.Key))
		}
		return nil, errs
	}
	if err := checkType(node.GetKind(), node.GetApiVersion()); err != nil {
		return nil, FieldErrors{err}
	}
	raw, err := toJSON(node)
	if err != nil {
		return nil, FieldErrors{kube.FieldErrorf("", "reading functionConfig: %v", err)}
	}
	return decodeJSON(raw)
}

// toJSON is the JSON of node as kyaml's RNode.MarshalJSON gives it, without
// writing the node as YAML and parsing that again: yaml.v3 decodes the
// node tree itself, by the same rules (tags, anchors, merge keys). A
// fleet's policies are decoded by the thousand; the round trip through
// text was most of the cost.
func toJSON(node *yaml.RNode) ([]byte, error) {
	m := map[string]any{}
	if err := node.YNode().Decode(&m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// checkType returns an error naming the field that makes kind and
// apiVersion not a RotationPolicy: the apiVersion of a RotationPolicy of
// another version, else the kind.
func checkType(kind, apiVersion string) *kube.FieldError {
	switch {
	case kind == Kind && apiVersion == APIVersion:
		return nil
	case kind == Kind:
		return kube.FieldErrorf("apiVersion",
			"%s is not an apiVersion of %s this rotate-certs reads; use %s", kube.Quote(apiVersion), Kind, APIVersion)
	case kind == "ConfigMap" && apiVersion == "v1":
		return kube.FieldErrorf("kind",
			"%w; rotate-certs needs kind %s, apiVersion %s (a plain ConfigMap cannot carry the policy's structure)", ErrConfigMapFunctionConfig, Kind, APIVersion)
	case kind == "ConfigMap":
		return kube.FieldErrorf("kind",
			"functionConfig is %s %s; rotate-certs needs kind %s, apiVersion %s (a plain ConfigMap cannot carry the policy's structure)", kube.Safe(apiVersion), kind, Kind, APIVersion)
	default:
		return kube.FieldErrorf("kind",
			"functionConfig is %s %s; rotate-certs needs kind %s, apiVersion %s", kube.Safe(apiVersion), kube.Safe(kind), Kind, APIVersion)
	}
}

// decodeJSON is Decode for a policy already converted to JSON.
func decodeJSON(raw []byte) (*RotationPolicy, error) {
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return nil, FieldErrors{kube.FieldErrorf("", "reading functionConfig: %v", err)}
	}
	var errs FieldErrors
	checkShape("", generic, reflect.TypeFor[RotationPolicy](), &errs)
	if len(errs) > 0 {
		return nil, errs
	}
	var p RotationPolicy
	if err := json.Unmarshal(raw, &p); err != nil {
		if ute, ok := err.(*json.UnmarshalTypeError); ok {
			return nil, FieldErrors{{Field: ute.Field, Err: err}}
		}
		return nil, FieldErrors{{Err: err}}
	}
	p.setDefaults()
	if errs := p.validate(); len(errs) > 0 {
		return nil, errs
	}
	return &p, nil
}

// Name returns metadata.name, or "" when unset.
func (p *RotationPolicy) Name() string {
	name, _ := p.Metadata["name"].(string)
	return name
}

// InDomain reports whether a bundle of p is in a trust domain
// (spec.trustBundles[].domain): its trust is every member's, so what it
// holds depends on packages other than p's.
func (p *RotationPolicy) InDomain() bool {
	for _, b := range p.Spec.TrustBundles {
		if b.Domain != "" {
			return true
		}
	}
	return false
}

// Clock returns spec.now when set, else wall().
func (p *RotationPolicy) Clock(wall func() time.Time) time.Time {
	if p.Spec.Now != "" {
		t, err := time.Parse(time.RFC3339, p.Spec.Now)
		if err == nil {
			return t.UTC()
		}
	}
	return wall().UTC()
}
