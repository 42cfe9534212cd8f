package release

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/rotate-certs/rotate-certs/internal/policyschema"
	"github.com/yannh/kubeconform/pkg/resource"
	"github.com/yannh/kubeconform/pkg/validator"
)

// schemaLocation is where kubeconform finds the RotationPolicy's schema in
// the repository: the CRD catalog layout the docs tell users to pass with
// -schema-location.
func schemaLocation() string {
	return golden.Path("schemas") + "/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"
}

func newValidator(t *testing.T) validator.Validator {
	t.Helper()
	v, err := validator.New([]string{schemaLocation()}, validator.Opts{Strict: true, IgnoreMissingSchemas: true})
	if err != nil {
		t.Fatal(err)
	}
	// The template, filled in for a RotationPolicy, is the committed file.
	filled := strings.NewReplacer("{{ .Group }}", "rotate-certs.dev", "{{ .ResourceKind }}", "rotationpolicy",
		"{{ .ResourceAPIVersion }}", "v1alpha1").Replace(schemaLocation())
	if filled != golden.Path(policyschema.SchemaFile) {
		t.Fatalf("the schema location points at %s, the schema is %s", filled, policyschema.SchemaFile)
	}
	return v
}

// TestKubeconformExamples: `kubeconform -strict` with the repository's
// schema location, over every manifest file of examples/ as a user's CI
// runs it over a repository: each RotationPolicy is valid (other kinds have
// no schema here and are skipped, as -ignore-missing-schemas does).
func TestKubeconformExamples(t *testing.T) {
	v := newValidator(t)
	files, err := filepath.Glob(golden.Path("examples", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policies := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range v.Validate(f, reader(data)) {
			sig, _ := r.Resource.Signature()
			if sig != nil && sig.Kind == "RotationPolicy" {
				policies++
				if r.Status != validator.Valid {
					t.Errorf("%s: RotationPolicy %s: status %d: %v %v", f, sig.Name, r.Status, r.Err, r.ValidationErrors)
				}
				continue
			}
			if r.Status == validator.Invalid || r.Status == validator.Error {
				t.Errorf("%s: %v: %v", f, r.Err, r.ValidationErrors)
			}
		}
	}
	if policies < 8 {
		t.Errorf("kubeconform validated %d RotationPolicies in examples/", policies)
	}
}

// TestKubeconformAgreesWithDecode: kubeconform, strict, accepts every
// policy of the repository that rotate-certs accepts and every one the
// documentation shows, and refuses every misspelled, mistyped,
// unknown-mode, out-of-range and incomplete variant of them.
func TestKubeconformAgreesWithDecode(t *testing.T) {
	v := newValidator(t)
	data, err := os.ReadFile(golden.Path(policyschema.SchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	var s policyschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	tried := map[string]int{}
	for _, p := range policyschema.Corpus(t) {
		if p.Valid || p.Documented {
			if r := v.ValidateResource(resource.Resource{Path: p.Where, Bytes: p.JSON}); r.Status != validator.Valid {
				t.Errorf("%s: kubeconform refuses it (status %d): %v %v", p.Where, r.Status, r.Err, r.ValidationErrors)
			}
		}
		if !p.Valid {
			continue
		}
		for _, m := range policyschema.Mutations(p.Decoded(), &s) {
			if tried[m.Kind]++; tried[m.Kind] > 3 {
				continue
			}
			raw, _ := json.Marshal(m.Policy)
			r := v.ValidateResource(resource.Resource{Path: p.Where, Bytes: raw})
			switch {
			case r.Status == validator.Invalid || r.Status == validator.Error:
				// refused: kubeconform exits non-zero on both
			case r.Status == validator.Skipped && identityChanged(m.Policy):
				// another kind or apiVersion has no schema here: kubeconform
				// picks a schema by them, and rotate-certs refuses the kind
			default:
				t.Errorf("%s: %s: kubeconform status %d, want invalid", p.Where, m.What, r.Status)
			}
		}
	}
	if len(tried) < 50 {
		t.Errorf("only %d kinds of mutation tried", len(tried))
	}
}

// identityChanged reports whether a mutated policy no longer says it is a
// rotate-certs.dev/v1alpha1 RotationPolicy.
func identityChanged(policy any) bool {
	obj, _ := policy.(map[string]any)
	return obj["apiVersion"] != "rotate-certs.dev/v1alpha1" || obj["kind"] != "RotationPolicy"
}

func reader(b []byte) *readCloser { return &readCloser{bytes.NewReader(b)} }

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }
