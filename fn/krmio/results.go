package krmio

import (
	"bufio"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// writeResults writes "results:" and the list in block style. A run
// reports one result per certificate, tens of thousands at scale, and
// kyaml's reflection-based marshalling of them cost as much as the rest of
// the output; results are flat records of strings, so they are written
// directly: plain when the string cannot be mistaken for anything else,
// else double-quoted with Go's escapes (all of them YAML escapes too). A
// result with a field value (any type) goes through yaml.Marshal.
func writeResults(w *bufio.Writer, results framework.Results) error {
	w.WriteString("results:\n")
	var scratch []byte
	str := func(indent, key, value string) {
		if value == "" {
			return
		}
		w.WriteString(indent)
		w.WriteString(key)
		w.WriteString(": ")
		scratch = appendScalar(scratch[:0], value)
		w.Write(scratch)
		w.WriteByte('\n')
	}
	for _, r := range results {
		if r.Field != nil && (r.Field.CurrentValue != nil || r.Field.ProposedValue != nil) {
			b, err := yaml.Marshal(framework.Results{r})
			if err != nil {
				return err
			}
			w.Write(b)
			continue
		}
		w.WriteString("- ")
		first := true
		field := func(key, value string) {
			if value == "" {
				return
			}
			indent := "  "
			if first {
				indent, first = "", false
			}
			str(indent, key, value)
		}
		field("message", r.Message)
		field("severity", string(r.Severity))
		if ref := r.ResourceRef; ref != nil && *ref == (yaml.ResourceIdentifier{}) {
			// kyaml marshals an empty reference as {}; a bare key would
			// read back as null (found by FuzzFastPathMatchesKyaml).
			if first {
				w.WriteString("resourceRef: {}\n")
				first = false
			} else {
				w.WriteString("  resourceRef: {}\n")
			}
		} else if ref != nil {
			if first {
				w.WriteString("resourceRef:\n")
				first = false
			} else {
				w.WriteString("  resourceRef:\n")
			}
			str("    ", "apiVersion", ref.APIVersion)
			str("    ", "kind", ref.Kind)
			str("    ", "name", ref.Name)
			str("    ", "namespace", ref.Namespace)
		}
		if r.Field != nil && r.Field.Path != "" {
			w.WriteString(nest(&first, "field"))
			str("    ", "path", r.Field.Path)
		}
		if r.File != nil && r.File.Path != "" {
			w.WriteString(nest(&first, "file"))
			str("    ", "path", r.File.Path)
			if r.File.Index != 0 {
				w.WriteString("    index: " + strconv.Itoa(r.File.Index) + "\n")
			}
		}
		if len(r.Tags) > 0 {
			w.WriteString(nest(&first, "tags"))
			keys := make([]string, 0, len(r.Tags))
			for k := range r.Tags {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				w.WriteString("    ")
				w.Write(appendScalar(scratch[:0], k))
				w.WriteString(": ")
				w.Write(appendScalar(scratch[:0], r.Tags[k]))
				w.WriteByte('\n')
			}
		}
		if first { // an empty result
			w.WriteString("{}\n")
		}
	}
	return nil
}

// nest returns the "key:" line of a nested mapping, as the first key of
// the entry or a following one.
func nest(first *bool, key string) string {
	if *first {
		*first = false
		return key + ":\n"
	}
	return "  " + key + ":\n"
}

// appendScalar appends s as a YAML scalar: plain if it is made only of
// characters that cannot start or change the meaning of a plain scalar and
// does not read as a bool, null or number, else double-quoted.
func appendScalar(dst []byte, s string) []byte {
	if plainSafe(s) {
		return append(dst, s...)
	}
	return strconv.AppendQuote(dst, s)
}

func plainSafe(s string) bool {
	if s == "" || s[len(s)-1] == ' ' || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false // must start with a letter: no numbers, dates, indicators
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9', c == '.', c == '/', c == '_', c == '-', c == '(', c == ')', c == ',', c == '+', c == '=':
		case c == ' ':
			if i+1 < len(s) && s[i+1] == '#' {
				return false
			}
		default:
			return false
		}
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".inf", ".nan":
		return false
	}
	return true
}
