package kube

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestSelectorMatches(t *testing.T) {
	labels := map[string]string{"trust": "gateway", "tier": "edge"}
	tests := []struct {
		name string
		sel  Selector
		want bool
	}{
		{"empty selects all", Selector{}, true},
		{"matchLabels hit", Selector{MatchLabels: map[string]string{"trust": "gateway"}}, true},
		{"matchLabels wrong value", Selector{MatchLabels: map[string]string{"trust": "mesh"}}, false},
		{"matchLabels missing key", Selector{MatchLabels: map[string]string{"team": "a"}}, false},
		{"In hit", Selector{MatchExpressions: []Requirement{{Key: "tier", Operator: "In", Values: []string{"core", "edge"}}}}, true},
		{"In miss", Selector{MatchExpressions: []Requirement{{Key: "tier", Operator: "In", Values: []string{"core"}}}}, false},
		{"NotIn hit", Selector{MatchExpressions: []Requirement{{Key: "tier", Operator: "NotIn", Values: []string{"edge"}}}}, false},
		{"NotIn absent key", Selector{MatchExpressions: []Requirement{{Key: "zone", Operator: "NotIn", Values: []string{"a"}}}}, true},
		{"Exists", Selector{MatchExpressions: []Requirement{{Key: "trust", Operator: "Exists"}}}, true},
		{"DoesNotExist", Selector{MatchExpressions: []Requirement{{Key: "trust", Operator: "DoesNotExist"}}}, false},
		{"labels and expressions ANDed", Selector{MatchLabels: map[string]string{"trust": "gateway"}, MatchExpressions: []Requirement{{Key: "tier", Operator: "In", Values: []string{"core"}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sel.Matches(labels); got != tt.want {
				t.Fatalf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSelectorOf(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{"labels and expressions", "{matchLabels: {a: b}, matchExpressions: [{key: t, operator: In, values: [x]}]}", "a=b,t in (x)", ""},
		{"empty", "{}", "", ""},
		{"not an object", "[a]", "", "cannot unmarshal array"},
		{"labels not strings", "{matchLabels: {a: [b]}}", "", "cannot unmarshal array"},
		{"invalid requirement", "{matchExpressions: [{key: t, operator: In}]}", "", "matchExpressions[0].values: must be non-empty for operator In"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := SelectorOf(yaml.MustParse(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("SelectorOf error = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || s.String() != tt.want {
				t.Fatalf("SelectorOf = %q, %v; want %q", s, err, tt.want)
			}
		})
	}
}

func TestSelectorValidate(t *testing.T) {
	bad := []Selector{
		{MatchExpressions: []Requirement{{Key: "a", Operator: "In"}}},
		{MatchExpressions: []Requirement{{Key: "a", Operator: "Exists", Values: []string{"x"}}}},
		{MatchExpressions: []Requirement{{Key: "a", Operator: "Equals", Values: []string{"x"}}}},
		{MatchExpressions: []Requirement{{Operator: "Exists"}}},
	}
	for i, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("selector %d: want an error", i)
		}
	}
	if err := (Selector{MatchExpressions: []Requirement{{Key: "a", Operator: "NotIn", Values: []string{"x"}}}}).Validate(); err != nil {
		t.Errorf("valid selector rejected: %v", err)
	}
}

func TestSelectorString(t *testing.T) {
	for _, tc := range []struct {
		sel  Selector
		want string
	}{
		{Selector{}, ""},
		{Selector{MatchLabels: map[string]string{"b": "2", "a": "1"}}, "a=1,b=2"},
		{Selector{MatchLabels: map[string]string{"cluster.x-k8s.io/cluster-name": "prod"}, MatchExpressions: []Requirement{
			{Key: "tier", Operator: "In", Values: []string{"core", "edge"}},
			{Key: "zone", Operator: "NotIn", Values: []string{"a"}},
			{Key: "managed", Operator: "Exists"},
			{Key: "legacy", Operator: "DoesNotExist"},
		}}, "cluster.x-k8s.io/cluster-name=prod,tier in (core,edge),zone notin (a),managed,!legacy"},
	} {
		if got := tc.sel.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestSelectorOnly(t *testing.T) {
	for _, tc := range []struct {
		sel  Selector
		want bool
	}{
		{Selector{}, true},
		{Selector{MatchLabels: map[string]string{NamespaceNameLabel: "a"}}, true},
		{Selector{MatchExpressions: []Requirement{{Key: NamespaceNameLabel, Operator: "NotIn", Values: []string{"kube-system"}}}}, true},
		{Selector{MatchLabels: map[string]string{NamespaceNameLabel: "a", "team": "x"}}, false},
		{Selector{MatchExpressions: []Requirement{{Key: "team", Operator: "Exists"}}}, false},
	} {
		if got := tc.sel.Only(NamespaceNameLabel); got != tc.want {
			t.Errorf("%q.Only(name label) = %v, want %v", tc.sel.String(), got, tc.want)
		}
	}
	got := NamespaceLabels("a", map[string]string{"team": "x", NamespaceNameLabel: "forged"})
	if len(got) != 2 || got["team"] != "x" || got[NamespaceNameLabel] != "a" {
		t.Errorf("NamespaceLabels = %v: the API server sets the name label to the name", got)
	}
}
