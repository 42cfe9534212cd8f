// Package policyschema generates the JSON Schema of the RotationPolicy from
// fn/policy's Go types, and the KRMFunctionDefinition that carries it to
// kpt and kustomize tooling. The committed files under schemas/ are its
// output (make golden rewrites them); its tests hold the schema to the
// strict decoder: every field of the Go types is in the schema and no
// other, and the schema and policy.Decode agree on every policy of the
// repository and on their misspelled, mistyped and unknown-mode variants.
package policyschema

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/rotate-certs/rotate-certs/fn/policy"
)

// Where the generated files live, from the repository's top directory. The
// schema's path follows the CRD catalog layout kubeconform reads
// ({{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json).
const (
	SchemaFile     = "schemas/rotate-certs.dev/rotationpolicy_v1alpha1.json"
	DefinitionFile = "schemas/krm-function-definition.yaml"
	// ReferenceFile is the policy reference whose "every field" block
	// gives each property its description.
	ReferenceFile = "docs/reference/policy.md"
	// RawBase is where the repository's files are published on its main
	// branch.
	RawBase = "https://raw.githubusercontent.com/rotate-certs/rotate-certs/main/"
)

// Schema is the subset of JSON Schema (draft-07) that is also OpenAPI v3's,
// so that one generated value serves editors, kubeconform and a
// KRMFunctionDefinition's openAPIV3Schema. Properties marshal in key order.
type Schema struct {
	SchemaURI            string             `json:"$schema,omitempty"`
	ID                   string             `json:"$id,omitempty"`
	Title                string             `json:"title,omitempty"`
	Description          string             `json:"description,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Enum                 []string           `json:"enum,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Minimum              *int               `json:"minimum,omitempty"`
	Maximum              *int               `json:"maximum,omitempty"`
	MinProperties        *int               `json:"minProperties,omitempty"`
	MaxProperties        *int               `json:"maxProperties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	AdditionalProperties any                `json:"additionalProperties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	// AnyOf and IntOrString describe a value that is a number or a string
	// (a wave size: 20 or "10%"), as Kubernetes' structural schemas do.
	AnyOf       []*Schema `json:"anyOf,omitempty"`
	IntOrString bool      `json:"x-kubernetes-int-or-string,omitempty"`
}

// Generate returns the RotationPolicy's schema: the shape of
// policy.RotationPolicy with the rules of fieldRules, each property
// described by its comment in the reference's YAML block (reference is the
// text of ReferenceFile).
func Generate(reference []byte) (*Schema, error) {
	descriptions, err := Descriptions(reference)
	if err != nil {
		return nil, err
	}
	s := schemaOf(reflect.TypeFor[policy.RotationPolicy](), "", descriptions)
	s.SchemaURI = "http://json-schema.org/draft-07/schema#"
	s.ID = RawBase + SchemaFile
	s.Title = policy.Kind + " " + policy.APIVersion
	s.Description = "The configuration of the rotate-certs KRM function: trust bundles that keep the previous CA trusted through a rotation, the workloads that restart, Cluster API certificate expiry and alerts. Reference: " +
		"https://github.com/rotate-certs/rotate-certs/blob/main/" + ReferenceFile
	return s, nil
}

// JSON is the schema as committed: indented, ending in a newline.
func (s *Schema) JSON() []byte {
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(err) // a Schema always marshals
	}
	return append(out, '\n')
}

// schemaOf maps a Go type at a field path (dotted, without list indexes)
// to its schema.
func schemaOf(t reflect.Type, path string, descriptions map[string]string) *Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := namedTypes[t]; ok {
		c := *s
		return &c
	}
	switch t.Kind() {
	case reflect.Struct:
		return structSchema(t, path, descriptions)
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return &Schema{Type: "object"}
		}
		return &Schema{Type: "object", AdditionalProperties: schemaOf(t.Elem(), path+".*", descriptions)}
	case reflect.Slice:
		return &Schema{Type: "array", Items: schemaOf(t.Elem(), path+"[]", descriptions)}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return &Schema{Type: "integer"}
	}
	panic(fmt.Sprintf("policyschema: no schema for %s at %s", t, path))
}

// structSchema is an object with exactly the struct's JSON fields, each
// with its rules and description.
func structSchema(t reflect.Type, path string, descriptions map[string]string) *Schema {
	s := &Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: false}
	fields := policy.JSONFields(t)
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		fp := strings.TrimPrefix(path+"."+name, ".")
		p := schemaOf(fields[name], fp, descriptions)
		if r, ok := fieldRules[fieldKey{t, name}]; ok {
			r.apply(p)
			if r.required {
				s.Required = append(s.Required, name)
			}
		}
		p.Description = descriptions[fp]
		s.Properties[name] = p
	}
	if r, ok := typeRules[t]; ok {
		r(s)
	}
	return s
}
