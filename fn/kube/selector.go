package kube

// Label selectors (matchLabels and matchExpressions) matched against label
// maps as the API server does, without pulling in k8s.io/apimachinery.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Selector is a Kubernetes LabelSelector. The zero value selects everything.
type Selector struct {
	// MatchLabels requires each key to have exactly this value.
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// MatchExpressions are ANDed requirements.
	MatchExpressions []Requirement `json:"matchExpressions,omitempty"`
}

// Requirement is one matchExpressions entry.
type Requirement struct {
	// Key is the label key.
	Key string `json:"key"`
	// Operator is In, NotIn, Exists or DoesNotExist.
	Operator string `json:"operator"`
	// Values are the candidate values for In and NotIn.
	Values []string `json:"values,omitempty"`
}

// SelectorOf decodes the label selector at node through JSON, as the API
// server does, and validates it.
func SelectorOf(node *yaml.RNode) (Selector, error) {
	var s Selector
	raw, err := node.MarshalJSON()
	if err == nil {
		err = json.Unmarshal(raw, &s)
	}
	if err == nil {
		err = s.Validate()
	}
	return s, err
}

// Validate returns an error describing the first malformed requirement.
func (s Selector) Validate() error {
	for i, r := range s.MatchExpressions {
		switch r.Operator {
		case "In", "NotIn":
			if len(r.Values) == 0 {
				return fmt.Errorf("matchExpressions[%d].values: must be non-empty for operator %s", i, r.Operator)
			}
		case "Exists", "DoesNotExist":
			if len(r.Values) != 0 {
				return fmt.Errorf("matchExpressions[%d].values: must be empty for operator %s", i, r.Operator)
			}
		default:
			return fmt.Errorf("matchExpressions[%d].operator: %s is not one of In, NotIn, Exists, DoesNotExist", i, Quote(r.Operator))
		}
		if r.Key == "" {
			return fmt.Errorf("matchExpressions[%d].key: must not be empty", i)
		}
	}
	return nil
}

// NamespaceNameLabel is the label the API server sets on every Namespace
// to its name; a namespaceSelector may select by it, though no Namespace
// manifest in git carries it.
const NamespaceNameLabel = "kubernetes.io/metadata.name"

// NamespaceLabels returns the labels a namespaceSelector sees on namespace
// ns whose manifest carries labels (nil when the input lacks it): those,
// and always the name label.
func NamespaceLabels(ns string, labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	maps.Copy(out, labels)
	out[NamespaceNameLabel] = ns
	return out
}

// Only reports whether every requirement of s is on label key, so that a
// label set holding only key decides whether s matches.
func (s Selector) Only(key string) bool {
	for k := range s.MatchLabels {
		if k != key {
			return false
		}
	}
	for _, r := range s.MatchExpressions {
		if r.Key != key {
			return false
		}
	}
	return true
}

// Empty reports whether the selector has no requirement (and so selects
// everything).
func (s Selector) Empty() bool {
	return len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}

// Matches reports whether labels satisfy every requirement of s.
func (s Selector) Matches(labels map[string]string) bool {
	for k, v := range s.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, r := range s.MatchExpressions {
		got, ok := labels[r.Key]
		switch r.Operator {
		case "In":
			if !ok || !slices.Contains(r.Values, got) {
				return false
			}
		case "NotIn":
			if ok && slices.Contains(r.Values, got) {
				return false
			}
		case "Exists":
			if !ok {
				return false
			}
		case "DoesNotExist":
			if ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// String writes the selector in the syntax of kubectl's --selector:
// "key=value" for each matchLabels entry (sorted by key), then each
// expression as "key in (a,b)", "key notin (a,b)", "key" (Exists) or
// "!key" (DoesNotExist), joined by commas. The empty selector is "".
func (s Selector) String() string {
	keys := slices.Sorted(maps.Keys(s.MatchLabels))
	parts := make([]string, 0, len(keys)+len(s.MatchExpressions))
	for _, k := range keys {
		parts = append(parts, k+"="+s.MatchLabels[k])
	}
	for _, r := range s.MatchExpressions {
		switch r.Operator {
		case "In":
			parts = append(parts, r.Key+" in ("+strings.Join(r.Values, ",")+")")
		case "NotIn":
			parts = append(parts, r.Key+" notin ("+strings.Join(r.Values, ",")+")")
		case "Exists":
			parts = append(parts, r.Key)
		case "DoesNotExist":
			parts = append(parts, "!"+r.Key)
		default:
			parts = append(parts, r.Key+" "+r.Operator+" ("+strings.Join(r.Values, ",")+")")
		}
	}
	return strings.Join(parts, ",")
}
