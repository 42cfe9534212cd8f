package policyschema

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// Mutation is a valid policy made invalid in one place: a misspelled
// field, a value of the wrong type, a value outside an enum or range, a
// required field removed. Both policy.Decode and the schema must refuse
// every one.
type Mutation struct {
	What   string // "spec.trustBundles[0].mode: not one of the enum"
	Kind   string // the field without list indexes and the kind of change: the same in every policy
	Policy any    // the mutated policy, as generic JSON
}

// Mutations returns the mutations of policy (generic JSON) that s allows
// to be judged by the schema alone: every field outside metadata, whose
// content is the user's.
func Mutations(policy any, s *Schema) []Mutation {
	var out []Mutation
	walk(policy, s, nil, false, func(path []any, v any, vs *Schema, declared bool) {
		where := pathString(path)
		add := func(change string, p any) {
			out = append(out, Mutation{where + ": " + change, indexes.ReplaceAllString(where, "[]") + ": " + change, p})
		}
		if len(path) > 0 {
			add("wrong type", setAt(policy, path, wrongType(v, vs)))
		}
		if key, ok := last(path).(string); ok && declared {
			add("misspelled as "+key+"x", renameAt(policy, path, key+"x"))
		}
		if vs.Enum != nil {
			add("not one of the enum", setAt(policy, path, "Unknown"+fmt.Sprint(v)))
		}
		if vs.Minimum != nil {
			add("below the minimum", setAt(policy, path, *vs.Minimum-1))
		}
		if vs.Maximum != nil {
			add("above the maximum", setAt(policy, path, *vs.Maximum+1))
		}
		obj, _ := v.(map[string]any)
		for _, r := range vs.Required {
			if _, ok := obj[r]; ok {
				add(r+" (required) removed", deleteAt(policy, append(slices.Clone(path), r)))
			}
		}
	})
	return out
}

var indexes = regexp.MustCompile(`\[[0-9]+\]`)

// walk calls f on every value of v with its schema, depth first, and
// whether the value is a declared property (a field, not a map entry); it
// does not enter metadata (any content is allowed there) or values the
// schema does not describe.
func walk(v any, s *Schema, path []any, declared bool, f func([]any, any, *Schema, bool)) {
	if s == nil || (len(path) == 1 && path[0] == "metadata") {
		return
	}
	f(path, v, s, declared)
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			ps, field := s.Properties[k], true
			if ps == nil {
				ps, _ = s.AdditionalProperties.(*Schema)
				field = false
			}
			walk(x[k], ps, append(slices.Clone(path), k), field, f)
		}
	case []any:
		for i, e := range x {
			walk(e, s.Items, append(slices.Clone(path), i), false, f)
		}
	}
}

// wrongType returns a value of another JSON type than v's (than both a
// number and a string, for a field that takes either).
func wrongType(v any, vs *Schema) any {
	if vs.IntOrString {
		return true // a number and a string are both right
	}
	switch v.(type) {
	case string:
		return 7
	case map[string]any, []any:
		return "x"
	default: // numbers and booleans
		return map[string]any{"x": 1}
	}
}

func last(path []any) any {
	if len(path) == 0 {
		return nil
	}
	return path[len(path)-1]
}

func pathString(path []any) string {
	s := ""
	for _, p := range path {
		switch x := p.(type) {
		case int:
			s += fmt.Sprintf("[%d]", x)
		default:
			if s != "" {
				s += "."
			}
			s += fmt.Sprint(x)
		}
	}
	return s
}

// deepCopy copies a generic JSON value.
func deepCopy(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

// edit returns a copy of root with f applied to the container of path's
// last element.
func edit(root any, path []any, f func(parent any, key any)) any {
	out := deepCopy(root)
	parent := out
	for _, p := range path[:len(path)-1] {
		switch x := parent.(type) {
		case map[string]any:
			parent = x[p.(string)]
		case []any:
			parent = x[p.(int)]
		}
	}
	f(parent, last(path))
	return out
}

func setAt(root any, path []any, v any) any {
	return edit(root, path, func(parent, key any) {
		switch x := parent.(type) {
		case map[string]any:
			x[key.(string)] = v
		case []any:
			x[key.(int)] = v
		}
	})
}

func renameAt(root any, path []any, name string) any {
	return edit(root, path, func(parent, key any) {
		m := parent.(map[string]any)
		m[name] = m[key.(string)]
		delete(m, key.(string))
	})
}

func deleteAt(root any, path []any) any {
	return edit(root, path, func(parent, key any) { delete(parent.(map[string]any), key.(string)) })
}
