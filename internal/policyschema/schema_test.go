package policyschema

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/initpolicy"
	"github.com/rotate-certs/rotate-certs/fn/policy"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	k8syaml "sigs.k8s.io/yaml"
)

func generate(t *testing.T) *Schema {
	t.Helper()
	ref, err := os.ReadFile(golden.Path(ReferenceFile))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Generate(ref)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCommittedFiles: the committed schema and KRMFunctionDefinition are
// what the generator makes of the current types (make golden rewrites
// them).
func TestCommittedFiles(t *testing.T) {
	s := generate(t)
	golden.Check(t, golden.Path(SchemaFile), s.JSON())
	md, err := os.ReadFile(golden.Path("metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadCatalog(md)
	if err != nil {
		t.Fatal(err)
	}
	def, err := Definition(s, c)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, golden.Path(DefinitionFile), def)
}

// TestInitNamesTheSchema: the schema line init writes names the committed
// schema's published address, which is the schema's $id.
func TestInitNamesTheSchema(t *testing.T) {
	if want := RawBase + SchemaFile; initpolicy.SchemaURL != want || committed(t).ID != want {
		t.Errorf("init names %s, the schema's $id is %s, the committed file is published at %s", initpolicy.SchemaURL, committed(t).ID, want)
	}
}

// committed reads the committed schema.
func committed(t *testing.T) *Schema {
	t.Helper()
	data, err := os.ReadFile(golden.Path(SchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	var s Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", SchemaFile, err)
	}
	return &s
}

// TestSchemaFieldsMatchTypes: every field the strict decoder accepts is a
// property of the committed schema, and every property is such a field,
// at every level.
func TestSchemaFieldsMatchTypes(t *testing.T) {
	var problems []string
	compareFields(reflect.TypeFor[policy.RotationPolicy](), committed(t), "", &problems)
	for _, p := range problems {
		t.Error(p)
	}
}

func compareFields(ty reflect.Type, s *Schema, path string, problems *[]string) {
	for ty.Kind() == reflect.Pointer {
		ty = ty.Elem()
	}
	if s == nil {
		*problems = append(*problems, path+": the Go type has it, the schema does not describe it")
		return
	}
	if _, named := namedTypes[ty]; named {
		return
	}
	switch ty.Kind() {
	case reflect.Slice:
		compareFields(ty.Elem(), s.Items, path+"[]", problems)
	case reflect.Map:
		if sub, ok := s.AdditionalProperties.(*Schema); ok {
			compareFields(ty.Elem(), sub, path+".*", problems)
		}
	case reflect.Struct:
		fields := policy.JSONFields(ty)
		for name, ft := range fields {
			compareFields(ft, s.Properties[name], strings.TrimPrefix(path+"."+name, "."), problems)
		}
		for name := range s.Properties {
			if _, ok := fields[name]; !ok {
				*problems = append(*problems, strings.TrimPrefix(path+"."+name, ".")+": in the schema, not a field of "+ty.String())
			}
		}
		if s.AdditionalProperties != false {
			*problems = append(*problems, path+": the schema allows unknown fields; the decoder refuses them")
		}
	}
}

// TestFieldParityCatchesADrift: the comparison fails on a schema with a
// field the types lack and without one they have.
func TestFieldParityCatchesADrift(t *testing.T) {
	s := committed(t)
	spec := s.Properties["spec"]
	spec.Properties["extra"] = &Schema{Type: "string"}
	delete(spec.Properties, "alerts")
	var problems []string
	compareFields(reflect.TypeFor[policy.RotationPolicy](), s, "", &problems)
	slices.Sort(problems)
	want := []string{
		"spec.alerts: the Go type has it, the schema does not describe it",
		"spec.extra: in the schema, not a field of policy.Spec",
	}
	if !slices.Equal(problems, want) {
		t.Errorf("problems %q, want %q", problems, want)
	}
}

// TestReferenceRowsAreFields: every row of the reference's field table
// names a field of the schema, so that no description is lost to a
// renamed field.
func TestReferenceRowsAreFields(t *testing.T) {
	ref, err := os.ReadFile(golden.Path(ReferenceFile))
	if err != nil {
		t.Fatal(err)
	}
	descriptions, err := Descriptions(ref)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	var visit func(s *Schema, path string)
	visit = func(s *Schema, path string) {
		for name, p := range s.Properties {
			fp := strings.TrimPrefix(path+"."+name, ".")
			fields[fp] = true
			visit(p, fp)
		}
		if s.Items != nil {
			visit(s.Items, path+"[]")
		}
	}
	visit(generate(t), "")
	for p := range descriptions {
		if !fields[p] {
			t.Errorf("%s, %q: %s is not a field of the RotationPolicy", ReferenceFile, fieldsHeading, p)
		}
	}
	if got := descriptions["spec.trustBundles[].sources[].configMap"]; got == "" {
		t.Errorf("the row of `…sources[].secret`, `.configMap` gave configMap no description")
	}
}

// kyamlConfig is a functionConfig type that hands kyaml's framework the
// schema of the KRMFunctionDefinition, as a kyaml-based tool does with
// framework.SchemaFromFunctionDefinition.
type kyamlConfig struct{ schema *spec.Schema }

func (c *kyamlConfig) Schema() (*spec.Schema, error) { return c.schema, nil }

// definitionSchema reads the committed KRMFunctionDefinition the way kyaml
// does.
func definitionSchema(t *testing.T) *spec.Schema {
	t.Helper()
	data, err := os.ReadFile(golden.Path(DefinitionFile))
	if err != nil {
		t.Fatal(err)
	}
	var def framework.KRMFunctionDefinition
	if err := k8syaml.UnmarshalStrict(data, &def); err != nil {
		t.Fatalf("%s is not a KRMFunctionDefinition: %v", DefinitionFile, err)
	}
	if def.APIVersion != framework.FunctionDefinitionGroupVersion || def.Kind != framework.FunctionDefinitionKind {
		t.Fatalf("%s is %s %s", DefinitionFile, def.APIVersion, def.Kind)
	}
	group, version, _ := strings.Cut(policy.APIVersion, "/")
	s, err := framework.SchemaFromFunctionDefinition(resid.NewGvk(group, version, policy.Kind), string(data))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// decode runs policy.Decode, the function's own reading, on a policy in
// JSON.
func decode(raw []byte) error {
	node, err := yaml.ConvertJSONToYamlNode(string(raw))
	if err != nil {
		return err
	}
	_, err = policy.Decode(node)
	return err
}

// kyamlValidate validates a policy against the definition's schema with
// kyaml's framework.LoadFunctionConfig.
func kyamlValidate(schema *spec.Schema, raw []byte) error {
	node, err := yaml.ConvertJSONToYamlNode(string(raw))
	if err != nil {
		return err
	}
	return framework.LoadFunctionConfig(node, &kyamlConfig{schema})
}

// TestDefinitionAgreesWithDecode: kyaml, validating with the committed
// KRMFunctionDefinition, accepts every policy of the repository that
// policy.Decode accepts (and every shipped one is), and refuses every
// misspelled, mistyped, unknown-mode, out-of-range and incomplete variant
// of them, which Decode refuses too.
func TestDefinitionAgreesWithDecode(t *testing.T) {
	schema := definitionSchema(t)
	s := committed(t)
	corpus := Corpus(t)
	if len(corpus) < 50 {
		t.Fatalf("only %d policies found in the repository", len(corpus))
	}
	tried := map[string]int{}
	for _, p := range corpus {
		if p.Shipped && !p.Valid {
			t.Errorf("%s: a shipped policy that rotate-certs refuses", p.Where)
		}
		if err := kyamlValidate(schema, p.JSON); err != nil && (p.Valid || p.Documented) {
			t.Errorf("%s: rotate-certs accepts it or the documentation shows it, the KRMFunctionDefinition's schema refuses it: %v", p.Where, err)
		}
		if !p.Valid {
			continue
		}
		for _, m := range Mutations(p.Decoded(), s) {
			// The same change to the same field, in a few policies.
			if tried[m.Kind]++; tried[m.Kind] > 3 {
				continue
			}
			raw, _ := json.Marshal(m.Policy)
			if decode(raw) == nil {
				t.Errorf("%s: %s: rotate-certs accepts it", p.Where, m.What)
			}
			if err := kyamlValidate(schema, raw); err == nil {
				t.Errorf("%s: %s: the KRMFunctionDefinition's schema accepts it", p.Where, m.What)
			}
		}
	}
	t.Logf("%d policies, %d kinds of mutation", len(corpus), len(tried))
}
