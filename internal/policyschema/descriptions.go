package policyschema

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// fieldsHeading is the section of the policy reference whose table says,
// field by field, the default and what a value means.
const fieldsHeading = "## Fields"

// rowPrefix is the reference's shorthand for a trust bundle's fields.
const rowPrefix = "spec.trustBundles[]"

var (
	codeSpan = regexp.MustCompile("`([^`]*)`")
	link     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// Descriptions reads the table of the reference's "Fields" section and
// returns each field's description by field path (spec.trustBundles[].mode,
// lists without indexes): the meaning and validation column, then the
// default - the user-facing words an editor shows on hover, kept in one
// place, the reference.
func Descriptions(reference []byte) (map[string]string, error) {
	_, rest, ok := bytes.Cut(reference, []byte("\n"+fieldsHeading+"\n"))
	if !ok {
		return nil, fmt.Errorf("%s has no %q section", ReferenceFile, fieldsHeading)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(rest), "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) != 3 {
			continue
		}
		desc := plain(cells[2])
		if d := plain(cells[1]); d != "-" {
			desc += ". Default: " + d + "."
		}
		for _, p := range rowPaths(cells[0]) {
			out[p] = desc
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no field rows under %q", ReferenceFile, fieldsHeading)
	}
	return out, nil
}

// rowPaths reads a field cell: code spans of paths, "…" for a trust
// bundle, a span starting with "." replacing the last step of the one
// before (`…sources[].secret`, `.configMap`).
func rowPaths(cell string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		p := strings.Replace(m[1], "…", rowPrefix+".", 1)
		if strings.HasPrefix(p, ".") && len(out) > 0 {
			prev := out[len(out)-1]
			p = prev[:strings.LastIndex(prev, ".")] + p
		}
		out = append(out, strings.TrimSuffix(p, "[]"))
	}
	return out
}

// plain is a Markdown cell as plain text: links as their text, code spans
// as their content.
func plain(cell string) string {
	return strings.TrimSpace(codeSpan.ReplaceAllString(link.ReplaceAllString(cell, "$1"), "$1"))
}
